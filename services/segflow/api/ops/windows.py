"""Windows: over the whole stream, or per key of a keyed stream."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import PipelineError
from ...plan.graph import Strategy
from ..core import K, StreamCore, T, V

if TYPE_CHECKING:
    from ..windowed import KeyedWindowedStream, WindowedStream
    from ..windows import WindowDescription


class WindowOps(StreamCore[T]):
    def window_all(self, window: "WindowDescription") -> "WindowedStream":
        """Windows over the whole stream (one replica); choose what each window becomes
        on the :class:`~segflow.WindowedStream` it returns.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> windows = env.from_iterable(range(7)).window_all(segflow.CountWindow.tumbling(3))
            >>> out = windows.sum().collect()
            >>> _ = env.execute()
            >>> out.get()
            [3, 12, 6]
        """
        from ..windowed import WindowedStream
        from ..windows import WindowDescription
        if not isinstance(window, WindowDescription):
            raise PipelineError("window needs CountWindow, EventTimeWindow or ProcessingTimeWindow, "
                                f"not {window!r}")
        return WindowedStream(self._single(f"window_all({window.name})"), window)


class KeyedWindowOps(StreamCore[tuple[K, V]]):
    def window(self, window: "WindowDescription") -> "KeyedWindowedStream":
        """Windows per key. After ``key_by`` (records keyed where they are) the records are
        first partitioned by the key, as ``group_by`` does: a window per key and replica
        would emit one partial result per replica that saw the key.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> sales = env.from_iterable([("ann", 3), ("bob", 1), ("ann", 4), ("ann", 5)])
            >>> windows = sales.group_by(lambda s: s[0]).map(lambda k, s: s[1]).window(segflow.CountWindow.tumbling(2))
            >>> out = windows.sum().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 5), ('ann', 7), ('bob', 1)]
        """
        from ..windowed import KeyedWindowedStream
        keyed = self._split("group_by", Strategy.HASH, keyed=True) if self.block.keys_in_place else self
        return KeyedWindowedStream(keyed, window)
