"""Whether a redeploy can carry the job's state over, as ``upgradeMode`` savepoint and
last-state promise. Some spec changes cannot: the new revision would find nothing it can
restore and start again from the beginning of its input, or fail after the running
revision was stopped. Such an upgrade is refused before anything is stopped, and the
running revision is kept until the spec says ``upgradeMode: stateless`` or is changed back.
"""
from __future__ import annotations

from segflow.checkpoint.protocols import CheckpointProtocol

from ..spec import StreamJobSpec
from .status import Deployed

KEEP = "The running revision is kept: set upgradeMode: stateless to redeploy it afresh, or undo the change"


def _restores(protocol: CheckpointProtocol) -> str:
    if protocol.uncoordinated:
        return "only its own stored stable line of local checkpoints"
    return "only complete checkpoints and savepoints"


def refusal(deployed: Deployed, spec: StreamJobSpec) -> str:
    """Why a redeploy of ``spec`` over the revision recorded as ``deployed`` (its
    ``status.deployed``) would lose the job's state ('' when it would not, or when the
    revision was deployed before its protocol was recorded)."""
    if spec.upgrade_mode == "stateless" or not deployed.protocol:
        return ""
    was, now = CheckpointProtocol.parse(deployed.protocol), spec.checkpointing.protocol
    if not was.enabled:
        return ""
    if not now.enabled:
        why = (f"spec.checkpointing.protocol changed from {was} to none: the new revision would keep no state "
               "and start again from the beginning of its input")
    elif was.uncoordinated != now.uncoordinated:
        why = (f"spec.checkpointing.protocol changed from {was} to {now}: {now} restores {_restores(now)}, "
               f"which {was} does not store, so the new revision would have nothing to restore")
    elif deployed.state_url not in (None, spec.checkpointing.state_url):
        why = ("spec.checkpointing.stateUrl changed: the new store holds none of the job's checkpoints (to move "
               "an aligned or unaligned job, take a savepoint and create a StreamJob with the new stateUrl and "
               "restoreFrom set to the savepoint's location)")
    elif (now.uncoordinated or now.segment_backup) and deployed.parallelism not in (None, spec.parallelism):
        why = (f"spec.parallelism changed from {deployed.parallelism} to {spec.parallelism}: the {now} protocol "
               "restores at the parallelism the job ran with")
    else:
        return ""
    return f"upgrade refused: {why}. {KEEP}"
