"""A new revision of the job: the one way every reconciler deploys."""
from __future__ import annotations

import json
from dataclasses import replace

from ..spec import InvalidSpec, StreamJobSpec, parse
from .actions import Decision, Deploy
from .status import Deployed, JobStatus, Phase


def deploy(d: Decision, spec: StreamJobSpec, revision: int, restore: str, message: str,
           phase: Phase = Phase.DEPLOYING) -> None:
    d.actions.append(Deploy(revision, restore))
    deployed = Deployed(hash=spec.deployment_hash(), parallelism=spec.parallelism,
                        protocol=spec.checkpointing.protocol.value, state_url=spec.checkpointing.state_url,
                        restored_from=restore, spec=json.dumps(spec.raw, sort_keys=True) if spec.raw else "")
    d.status = replace(d.status, revision=revision, ready_replicas=0, ready=f"0/{spec.parallelism}", coordinator_ip="",
                       last_error="", restored="", upgrade_refused="", deployed=deployed)
    d.phase(phase, message, warning=phase == Phase.RECOVERING)


def revision_spec(status: JobStatus, spec: StreamJobSpec) -> StreamJobSpec:
    """The spec the deployed revision was made from (``spec`` if none was recorded): its
    pods are built from it, so a worker replaced while a changed spec waits (a savepoint
    being taken, a refused upgrade) runs the revision's image, not the changed spec's."""
    recorded = status.deployed.spec if status.deployed else ""
    if not recorded:
        return spec
    try:
        return parse(json.loads(recorded))
    except (InvalidSpec, ValueError):
        return spec
