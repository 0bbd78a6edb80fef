"""Recovery plans and local-checkpoint records as protobuf fields.

Control messages carry no pickles: a peer that manages to send one cannot make the
receiver run code, it can at most send numbers that fail validation.
"""
from __future__ import annotations

from ..v1 import control_pb2 as cpb


def recovery_fields(plan: dict | None) -> dict:
    """Keyword arguments of :class:`cpb.Assignment` for a coordinator's recovery plan."""
    if not plan:
        return {}
    if "segment" in plan:
        segment = plan["segment"]
        return {"segment_restore": cpb.SegmentRestore(
            versions=segment["versions"],
            replays=[cpb.WindowReplay(connector=c, successor=s, first=first, last=last)
                     for (c, s), (first, last) in sorted(segment["replays"].items())])}
    return {"recovery_line": cpb.RecoveryLine(
        line=plan["line"],
        replay=[cpb.ChannelReplay(sender=a, receiver=b, first=first, last=last)
                for (a, b), (first, last) in sorted(plan["replay"].items())])}


def recovery_plan(assignment: cpb.Assignment) -> dict | None:
    """The recovery plan an assignment carries, in the coordinator's shape (None: none)."""
    kind = assignment.WhichOneof("recovery")
    if kind == "segment_restore":
        segment = assignment.segment_restore
        return {"segment": {"versions": dict(segment.versions),
                            "replays": {(r.connector, r.successor): (r.first, r.last) for r in segment.replays}}}
    if kind == "recovery_line":
        line = assignment.recovery_line
        return {"line": dict(line.line),
                "replay": {(r.sender, r.receiver): (r.first, r.last) for r in line.replay}}
    return None


def channel_counts(counts: dict) -> list[cpb.ChannelCount]:
    return [cpb.ChannelCount(sender=a, receiver=b, count=n) for (a, b), n in sorted(counts.items())]


def counts_of(counts) -> dict:
    return {(c.sender, c.receiver): c.count for c in counts}
