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
        """Windows over the whole stream (one replica)."""
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
        would emit one partial result per replica that saw the key."""
        from ..windowed import KeyedWindowedStream
        keyed = self._split("group_by", Strategy.HASH, keyed=True) if self.block.keys_in_place else self
        return KeyedWindowedStream(keyed, window)
