"""The ``segflow`` command."""
