"""Where a stream ends: back to the caller, a function per record, files, S3, Redis."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...errors import PipelineError
from ...runtime.operators.sinks import FileSink, ForEachSink
from ..core import StreamCore, T, _callable, _named

if TYPE_CHECKING:
    from ..environment import StreamOutput


class SinkOps(StreamCore[T]):
    def collect(self) -> "StreamOutput[T]":
        """Bring every record back to the caller: ``output.get()`` after the job ran. One
        replica gathers them, so keep it for results that fit in memory.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(["x", "y"]).collect()
            >>> _ = env.execute()
            >>> out.get()
            ['x', 'y']
        """
        return self.env._collect(self._single("collect"))

    def for_each(self, fn: Callable[[T], Any]) -> None:
        """Call ``fn(record)`` for every record, in the replicas (in worker processes
        too, so its effects stay there: use :meth:`collect` to get records back).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> env.from_iterable(["x", "y"]).map(str.upper).for_each(print)
            >>> _ = env.execute()
            X
            Y
        """
        _callable("for_each", fn)
        self._chain(_named("for_each", fn), lambda: ForEachSink(fn))

    def write_text(self, directory: str, format: Callable[[T], str] | None = None) -> None:
        """One line per record, ``format(record)`` or ``str(record)``, in part files
        ``directory/part-NNNNN.txt`` (one per replica). An ``s3://bucket/prefix`` directory
        writes part objects there instead, as :meth:`write_s3` does: one job file can then
        write locally and, on a cluster, to a store.

        Examples:
            >>> import pathlib
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> env.from_iterable([1, 2, 3]).shuffle().write_text("out", format=lambda x: f"n={x}")
            >>> _ = env.execute()
            >>> sorted(line for part in pathlib.Path("out").glob("part-*") for line in part.read_text().splitlines())
            ['n=1', 'n=2', 'n=3']
        """
        self._write_parts("write_text", directory, "text", format)

    def write_csv(self, directory: str, format: Callable[[T], Any] | None = None, delimiter: str = ",") -> None:
        """One CSV row per record (a sequence, or ``format(record)``), in part files (or
        part objects under an ``s3://`` directory, as for :meth:`write_text`).

        Examples:
            >>> import pathlib
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> env.from_iterable([{"id": 1, "name": "ann"}]).write_csv("out", format=lambda r: [r["id"], r["name"]])
            >>> _ = env.execute()
            >>> [part.read_text() for part in pathlib.Path("out").glob("part-*")]
            ['1,ann\\n']
        """
        self._write_parts("write_csv", directory, "csv", format, delimiter)

    def write_jsonl(self, directory: str, format: Callable[[T], Any] | None = None) -> None:
        """One JSON document per line per record, in part files (or part objects under an
        ``s3://`` directory, as for :meth:`write_text`).

        Examples:
            >>> import pathlib
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> env.from_iterable([{"id": 1}, {"id": 2}]).write_jsonl("out")
            >>> _ = env.execute()
            >>> [part.read_text() for part in pathlib.Path("out").glob("part-*")]
            ['{"id": 1}\\n{"id": 2}\\n']
        """
        self._write_parts("write_jsonl", directory, "jsonl", format)

    def _write_parts(self, name: str, directory: str, fmt: str, format: Callable[[T], Any] | None,
                     delimiter: str = ",") -> None:
        if str(directory).startswith("s3://"):
            self.write_s3(str(directory), fmt, format, delimiter)
        else:
            self._chain(f"{name}({directory})", lambda: FileSink(str(directory), fmt, format, delimiter))

    def write_s3(self, url: str, fmt: str = "text", format: Callable[[T], Any] | None = None, delimiter: str = ",",
                 endpoint: str | None = None) -> None:
        """Part objects ``part-NNNNN...<ext>`` under ``s3://bucket/prefix`` (one or more per
        replica), in ``fmt`` ``text``, ``jsonl`` or ``csv`` as for the file sinks; exactly once
        with checkpoints. ``endpoint``: an S3-compatible server (else ``AWS_ENDPOINT_URL``).

        Examples:
            The pipeline is built here; running it needs an S3 server, so that line is
            not run:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> env.from_iterable([{"id": 1}]).write_s3("s3://bucket/orders", fmt="jsonl",
            ...                                         endpoint="http://127.0.0.1:9000")
            >>> _ = env.execute()  # doctest: +SKIP
        """
        from ...runtime.operators.s3_sink import S3Sink, check_s3_url
        from ...runtime.operators.two_phase import part_suffix
        check_s3_url(str(url))
        try:
            part_suffix(fmt)
        except KeyError:
            raise PipelineError(f"write_s3: fmt must be 'text', 'jsonl' or 'csv', got {fmt!r}") from None
        if format is not None:
            _callable("write_s3", format)
        self._chain(f"write_s3({url})", lambda: S3Sink(str(url), fmt, format, delimiter, endpoint))

    def write_redis_stream(self, url: str, stream: str, formatter: Callable[[T], Any] | None = None) -> None:
        """One entry per record appended to a Redis stream: a dict record (or ``formatter``'s
        dict) gives the entry's fields, anything else the single field ``data``. Exactly once
        with checkpoints (idempotent commits keyed by replica and epoch).

        Examples:
            The pipeline is built here; running it needs a Redis server, so that line is
            not run:

            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> env.from_iterable([{"user": "ann"}, "plain"]).write_redis_stream("redis://127.0.0.1:6379", "events")
            >>> _ = env.execute()  # doctest: +SKIP
        """
        from ...runtime.operators.redis_streams import RedisStreamSink, check_redis_url
        check_redis_url(url, "write_redis_stream")
        if not isinstance(stream, str) or not stream:
            raise PipelineError(f"write_redis_stream needs a stream name, got {stream!r}")
        if formatter is not None:
            _callable("write_redis_stream", formatter)
        self._chain(f"write_redis_stream({stream})", lambda: RedisStreamSink(url, stream, formatter))
