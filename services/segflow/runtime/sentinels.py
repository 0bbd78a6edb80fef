"""Marker values that keep their identity through pickling.

Operator state is pickled into snapshots and unpickled by another process at a restore.
A bare ``object()`` marker comes back as a different object, so state keyed or compared
by it (``x is MARKER``) silently changes meaning after a restore: a non-keyed window open
at a checkpoint was continued in a second slot and emitted as two partial windows. These
markers pickle as a reference to their module-level name instead, so the restored value
*is* the marker.
"""
from __future__ import annotations


class Sentinel:
    """A named marker; pickles (and cloudpickles) by reference to ``sentinels.<name>``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def __reduce__(self) -> str:
        return self.name

    def __copy__(self) -> "Sentinel":
        return self

    def __deepcopy__(self, memo: dict) -> "Sentinel":
        return self


NO_KEY = Sentinel("NO_KEY")      # the one key of a non-keyed window operator
NOTHING = Sentinel("NOTHING")    # no value yet: no accumulator, no initial value, no job result
