"""A new revision of the job: the one way every reconciler deploys."""
from __future__ import annotations

from ..spec import StreamJobSpec
from .actions import Decision, Deploy


def deploy(d: Decision, spec: StreamJobSpec, revision: int, restore: str, current: str, message: str,
           phase: str = "Deploying") -> None:
    d.actions.append(Deploy(revision, restore))
    d.status.update({"revision": revision, "readyReplicas": 0, "ready": f"0/{spec.parallelism}", "coordinatorIP": "", "lastError": "", "restored": "",
                     "upgradeRefused": "",
                     "deployed": {"hash": spec.deployment_hash(), "parallelism": spec.parallelism,
                                  "protocol": spec.checkpointing.protocol.value,
                                  "stateUrl": spec.checkpointing.state_url, "restoredFrom": restore}})
    d.phase(current, phase, message, warning=phase == "Recovering")
