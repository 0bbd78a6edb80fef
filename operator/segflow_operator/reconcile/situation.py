"""One StreamJob as a reconcile step sees it: the spec, the status (the operator's
memory) and what is observed, with the facts every reconciler derives from them."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from segflow.checkpoint.protocols import CheckpointProtocol

from ..spec import StreamJobSpec
from .carry_over import refusal
from .deployment import revision_spec
from .status import Deployed, JobStatus, Phase, SavepointInProgress
from .views import CoordinatorPhase, CoordinatorView, Observed, PodView


@dataclass(frozen=True)
class Situation:
    spec: StreamJobSpec
    status: JobStatus
    observed: Observed

    @property
    def current(self) -> Phase | None:
        """The phase the status shows now."""
        return self.status.phase

    @property
    def revision(self) -> int:
        return self.status.revision or 0

    @cached_property
    def mine(self) -> list[PodView]:
        """The current revision's pods that are not being deleted."""
        return [p for p in self.observed.pods if p.revision == self.revision and not p.deleting]

    @cached_property
    def coordinator(self) -> PodView | None:
        return next((p for p in self.mine if p.role == "coordinator"), None)

    @property
    def coordinator_ip(self) -> str:
        """The current revision's coordinator's pod IP ('' before it has one, or without one)."""
        return self.coordinator.ip if self.coordinator is not None else ""

    @property
    def update(self) -> CoordinatorView | None:
        """The coordinator's latest update, if the current revision has a coordinator."""
        return self.observed.coordinator if self.coordinator is not None else None

    @property
    def unobserved(self) -> bool:
        """The coordinator's pod is up but no update from it has arrived yet (the operator
        has just started, or its watch is reconnecting): whether the job runs is not known."""
        coordinator = self.coordinator
        return coordinator is not None and not coordinator.ended and self.update is None

    @property
    def running(self) -> bool:
        """The job runs and its coordinator can be asked for a savepoint."""
        update = self.update
        return update is not None and update.phase == CoordinatorPhase.RUNNING and self.coordinator_ip != ""

    @property
    def deployed(self) -> Deployed:
        """What the status records of the deployed revision (``deployment.deploy``)."""
        return self.status.deployed or Deployed()

    @property
    def parallelism(self) -> int:
        """The deployed revision's worker count (a changed spec's is not its own until it is
        redeployed, and a refused upgrade never is)."""
        return self.deployed.parallelism or self.spec.parallelism

    @property
    def standby_workers(self) -> int:
        """The deployed revision's standby workers (its recorded spec's)."""
        return revision_spec(self.status, self.spec).standby_workers

    @property
    def deployed_protocol(self) -> CheckpointProtocol:
        """The protocol the deployed revision checkpoints with (the spec's, for a revision
        deployed before it was recorded): a savepoint is that revision's to take."""
        recorded = self.deployed.protocol
        return CheckpointProtocol.parse(recorded) if recorded else self.spec.checkpointing.protocol

    @property
    def takes_savepoints(self) -> bool:
        """The deployed revision can be asked for a savepoint (a protocol that cuts complete
        checkpoints; asking another fails every time it is asked)."""
        return self.deployed_protocol.takes_savepoints

    @property
    def changed(self) -> bool:
        """The wanted spec differs from the deployed one."""
        return self.deployed.hash != self.spec.deployment_hash()

    @cached_property
    def upgrade_refusal(self) -> str:
        """Why the changed spec may not be deployed: its redeploy would lose the job's
        state ('' when it may, or nothing changed)."""
        return refusal(self.deployed, self.spec) if self.changed else ""

    @property
    def savepoint_in_progress(self) -> SavepointInProgress | None:
        return self.status.savepoint_in_progress
