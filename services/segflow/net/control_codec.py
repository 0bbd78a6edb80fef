"""Restore plans and local-checkpoint records as protobuf fields.

Control messages carry no pickles: a peer that manages to send one cannot make the
receiver run code, it can at most send numbers that fail validation.
"""
from __future__ import annotations

from typing import Iterable

from ..checkpoint.restore_plan import LineRestore, RestorePlan, SegmentRestore
from ..v1 import control_pb2 as cpb


def recovery_fields(plan: RestorePlan | None) -> dict:
    """Keyword arguments of :class:`cpb.Assignment` for a coordinator's restore plan."""
    if isinstance(plan, SegmentRestore):
        return {"segment_restore": cpb.SegmentRestore(
            versions=plan.versions,
            replays=[cpb.WindowReplay(connector=c, successor=s, first=first, last=last)
                     for (c, s), (first, last) in sorted(plan.replays.items())],
            kept=sorted(plan.kept), through=plan.through)}
    if isinstance(plan, LineRestore):
        return {"recovery_line": cpb.RecoveryLine(
            line=plan.line,
            replay=[cpb.ChannelReplay(sender=a, receiver=b, first=first, last=last)
                    for (a, b), (first, last) in sorted(plan.replay.items())])}
    return {}


def restore_plan(assignment: cpb.Assignment) -> RestorePlan | None:
    """The restore plan an assignment carries (None: none)."""
    kind = assignment.WhichOneof("recovery")
    if kind == "segment_restore":
        segment = assignment.segment_restore
        return SegmentRestore(dict(segment.versions),
                              {(r.connector, r.successor): (r.first, r.last) for r in segment.replays},
                              frozenset(segment.kept), segment.through)
    if kind == "recovery_line":
        line = assignment.recovery_line
        return LineRestore(dict(line.line), {(r.sender, r.receiver): (r.first, r.last) for r in line.replay})
    return None


def channel_counts(counts: dict[tuple[str, str], int]) -> list[cpb.ChannelCount]:
    return [cpb.ChannelCount(sender=a, receiver=b, count=n) for (a, b), n in sorted(counts.items())]


def counts_of(counts: Iterable[cpb.ChannelCount]) -> dict[tuple[str, str], int]:
    return {(c.sender, c.receiver): c.count for c in counts}
