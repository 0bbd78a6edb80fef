"""What the recovery-line tests check a line against: the checkpoint graph rollback
propagation walks, and whether a line leaves an orphan message (a message processed at its
receiver's line checkpoint but sent after its sender's)."""
from collections.abc import Iterable, Mapping

from segflow.checkpoint.recovery_line import CheckpointRecord, _graph, _History


def checkpoint_graph(records: Iterable[CheckpointRecord]) -> set:
    """Wang's checkpoint graph of ``records``, as ``recovery_line`` builds it."""
    return _graph(_History(records))


def is_consistent(records: Iterable[CheckpointRecord], line: Mapping) -> bool:
    """No orphan message: ``line`` names a recorded checkpoint of every process."""
    history = _History(records)
    history.check_line(line)
    return not history.orphans(line)
