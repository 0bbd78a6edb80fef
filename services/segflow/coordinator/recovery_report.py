"""What the web view's recovery log says of one recovery: regional or global, which
blocks restarted at which versions, which kept running. Pure: the coordinator passes the
planned region (``checkpoint.regional``), or None for a recovery of every block."""
from __future__ import annotations

from typing import Mapping

from ..checkpoint.regional import RegionalRecovery
from ..observability.history import RecoveryEntry, RestartedBlock


def recovery_entry(at: float, lost: str, why: str, restored: str, region: RegionalRecovery[int] | None,
                   names: Mapping[int, str], damaged: str = "") -> RecoveryEntry:
    """The log entry of losing ``lost`` (``why``); ``names``: every block's name, by id;
    ``damaged``: the stored key a replay or restore found missing or damaged, which made
    this recovery (it grew past the blocks that needed the key)."""
    if region is None:
        return RecoveryEntry(at, lost, why, restored, "global",
                             tuple(RestartedBlock(b, names[b]) for b in sorted(names)), damaged=damaged)
    return RecoveryEntry(at, lost, why, restored, "regional",
                         tuple(RestartedBlock(b, names.get(b, str(b)), v) for b, v in sorted(region.restart.items())),
                         tuple(sorted(region.kept)), damaged)
