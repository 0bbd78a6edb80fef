"""What the coordinator asks of a checkpoint protocol, whatever its family.

The coordinator's bookkeeping (``coordinator.bookkeeping``) runs what every protocol shares:
checkpoint rounds, savepoints, recording a complete checkpoint under the job's lease,
retention. Everything a protocol decides on its own goes through one
:class:`CoordinatorSide`: where the first attempt resumes from, what an attempt restores,
what a lost worker costs, what a replica's acknowledgement or local checkpoint changes,
what the status says was restored, and what is left to clean up at the end. One
implementation per family lives beside its replica side (:mod:`.complete`, :mod:`.segment`,
:mod:`.local`); :mod:`.registry` says which family each protocol is.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

from ..checkpoint.catalog import Catalog
from ..checkpoint.layout import parse_location
from ..checkpoint.recovery_line import CheckpointRecord
from ..checkpoint.restore_plan import RestorePlan
from ..checkpoint.segment_plan import WindowSize
from ..errors import SegflowError
from ..observability.logs import event
from ..plan.graph import JobGraph
from ..plan.placement import Worker
from ..runtime.elements import FINAL_NAME, checkpoint_label
from ..settings import CheckpointSettings
from ..v1 import control_pb2 as cpb
from .cleanup import StoreCleanup
from .restore_checks import RestoreChecks

if TYPE_CHECKING:
    from ..checkpoint.regional import RegionalRecovery

log = logging.getLogger("segflow.coordinator")


@dataclass(frozen=True)
class ProtocolContext:
    """What a protocol's coordinator side works with: the job, its settings, its store and
    the store's cleanup, the restore checks, the job's layout (stored beside what it
    keeps) and the way to send the workers a command."""
    graph: JobGraph
    settings: CheckpointSettings
    catalog: Catalog
    cleanup: StoreCleanup
    checks: RestoreChecks
    layout: dict
    broadcast: Callable[[cpb.Command], None]


class CoordinatorSide(ABC):
    """One protocol family's decisions in the coordinator. The bookkeeping holds its lock
    around every call."""

    #: The coordinator triggers checkpoint rounds on the job's interval (the uncoordinated
    #: protocols' replicas checkpoint on their own timers instead).
    periodic_rounds = True

    def __init__(self, context: ProtocolContext) -> None:
        self.context = context
        self.restore_id = 0            # the complete checkpoint the next attempt restores (0: none)
        self.finished = False          # the job had ended: this run resumes from its end
        self.plan: RestorePlan | None = None     # what the next attempt restores beyond restore_id

    @property
    def wanted(self) -> str:
        """What the first attempt restores: ``--restore``, or the job's end if it had
        ended (resuming an ended job must not produce its output again)."""
        return FINAL_NAME if self.finished else self.context.settings.restore

    # ------------------------------------------------------------ the start
    #: ``--restore`` may name another job's checkpoint (a location), which is copied here.
    restores_other_jobs = False

    def choose_restore(self) -> None:
        """Before the first attempt: decide where the job resumes from (``--restore``, the
        store's newest state, the job's end), or raise ``SegflowError`` saying why nothing
        the user asked for can be restored."""
        settings = self.context.settings
        if settings.restore in ("latest", "auto"):
            self.context.checks.same_history()
        if parse_location(settings.restore) and not self.restores_other_jobs:
            raise SegflowError(f"--restore {settings.restore}: restoring another job's checkpoint works with the "
                               f"aligned and unaligned protocols, not {settings.protocol.value}")
        self._choose_restore()

    @abstractmethod
    def _choose_restore(self) -> None:
        """The family's part of :meth:`choose_restore`."""

    def _resume_end(self) -> None:
        """Set :attr:`finished`: ``latest``/``auto`` resume a job that had ended from its
        end; ``--restore end`` asks for it (the catalog refuses it unless the job had ended)."""
        settings = self.context.settings
        if settings.restore in ("latest", "auto"):
            self.finished = self.context.catalog.finished()
            if self.finished:
                event(log, logging.WARNING, "the job had finished: restoring its end, nothing is processed again",
                      job=settings.job_name)
        elif settings.restore == FINAL_NAME:
            self.finished = True

    # ------------------------------------------------------------ attempts
    def prepare(self, attempt: int, workers: list[Worker]) -> list[int]:
        """Before attempt ``attempt``'s assignment: set :attr:`plan`; returns the blocks
        that are connectors (segment backup), which the assignment names."""
        return []

    @abstractmethod
    def recover(self, lost: str, workers: list[str], last_complete: int | None) -> None:
        """Worker ``lost`` is gone (``last_complete``: the id of the newest checkpoint this
        run completed, if any): choose what the next attempt restores. Raises
        ``SegflowError`` when nothing can be."""

    def regional(self, lost: str, owners: Mapping[tuple[int, int], str]) -> "RegionalRecovery[int] | None":
        """Losing worker (slot) ``lost`` restarts only this region, the rest of the job
        running on (``owners``: replica -> worker); None: the next attempt restarts every
        replica, which is what every protocol but segment backup does."""
        return None

    def restart_region(self, attempt: int, region: "RegionalRecovery[int]", through: int) -> None:
        """Plan attempt ``attempt`` as the restart of ``region`` (:meth:`regional` said so);
        ``through``: the newest version the job has begun."""
        raise SegflowError(f"the {self.context.settings.protocol.value} protocol restarts every replica of a job")

    def region_registered(self) -> None:
        """Every slot of a regional attempt has registered again: the restarted workers'
        earlier attempts have ended (their writes to the store with them)."""

    def rescaling(self, workers: list[Worker]) -> tuple[dict, dict]:
        """For a restore: ``(replica counts of the snapshot if the plan's differ, pinned
        block counts)``; only complete checkpoints restore at other replica counts."""
        return {}, {}

    # ------------------------------------------------------------ rounds
    def acknowledged(self, checkpoint_id: int, ack: cpb.ReplicaAck) -> None:
        """A replica's part of round ``checkpoint_id`` is durable (or failed)."""

    def local_checkpoint(self, record: CheckpointRecord, workers: list[str]) -> None:
        """A replica stored a local checkpoint on its own timer."""
        raise SegflowError(f"the {self.context.settings.protocol.value} protocol takes no local checkpoints: "
                           "a worker of another protocol reported one (run the same segflow on every worker)")

    def excluded(self, key: str) -> None:
        """A restore found ``key`` damaged (the catalog excludes it already): if it was
        part of the job's end, resume from the newest intact state and the input after it."""
        if self.finished and not self.context.catalog.finished():
            self.finished = False

    # ------------------------------------------------------------ reports
    @abstractmethod
    def restoring(self) -> str:
        """As a recovery starts: where the new attempt will resume from."""

    def restored(self) -> str:
        """What the current attempt restored, for the operator's status ("": nothing)."""
        if self.plan is not None:
            return self.plan.describe()
        return f"checkpoint {checkpoint_label(self.restore_id)}" if self.restore_id else ""

    @property
    def connectors(self) -> set[int]:
        return set()

    def window_sizes(self) -> dict[int, WindowSize]:
        """Segment backup's pending windows per connector block (none otherwise)."""
        return {}

    # ------------------------------------------------------------ the end
    def block_segments(self) -> dict[int, int]:
        """Each plain block's segment number (segment backup; for the web view)."""
        return {}

    def notes(self) -> list[str]:
        """What the protocol chose for this run, said once as it starts (log and status)."""
        return []

    def placement_groups(self) -> tuple[tuple[int, ...], ...]:
        """Blocks that get workers of their own (placement by segment); none by default."""
        return ()

    def remove_unfinished(self) -> None:
        """The job has ended and its workers are stopped: remove what can never complete."""
