"""The stream operations, one module per family; :class:`~segflow.api.stream.Stream` and
:class:`~segflow.api.stream.KeyedStream` are the sum of these classes."""
