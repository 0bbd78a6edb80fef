"""A new revision of the job: the one way every reconciler deploys."""
from __future__ import annotations

import json

from ..spec import InvalidSpec, StreamJobSpec, parse
from .actions import Decision, Deploy


def deploy(d: Decision, spec: StreamJobSpec, revision: int, restore: str, current: str, message: str,
           phase: str = "Deploying") -> None:
    d.actions.append(Deploy(revision, restore))
    d.status.update({"revision": revision, "readyReplicas": 0, "ready": f"0/{spec.parallelism}", "coordinatorIP": "", "lastError": "", "restored": "",
                     "upgradeRefused": "",
                     "deployed": {"hash": spec.deployment_hash(), "parallelism": spec.parallelism,
                                  "protocol": spec.checkpointing.protocol.value,
                                  "stateUrl": spec.checkpointing.state_url, "restoredFrom": restore,
                                  "spec": json.dumps(spec.raw, sort_keys=True) if spec.raw else ""}})
    d.phase(current, phase, message, warning=phase == "Recovering")


def revision_spec(status: dict, spec: StreamJobSpec) -> StreamJobSpec:
    """The spec the deployed revision was made from (``spec`` if none was recorded): its
    pods are built from it, so a worker replaced while a changed spec waits (a savepoint
    being taken, a refused upgrade) runs the revision's image, not the changed spec's."""
    recorded = (status.get("deployed") or {}).get("spec")
    if not recorded:
        return spec
    try:
        return parse(json.loads(recorded))
    except (InvalidSpec, ValueError):
        return spec
