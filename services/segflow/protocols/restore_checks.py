"""Whether a restore may go ahead, before anything is written: a checkpoint (or stored
stable line) taken by a pipeline laid out otherwise is refused (plan.signature), and a
restore that finds nothing its protocol restores says what the store holds that a
protocol of the other kind would (complete checkpoints: aligned, unaligned, segment; a
stable line: uncoordinated, cic)."""
from __future__ import annotations

import logging

from ..checkpoint.catalog import Catalog
from ..checkpoint.protocols import CheckpointProtocol
from ..errors import SegflowError
from ..observability.logs import event
from ..plan.signature import layout_difference
from ..settings import CheckpointSettings

log = logging.getLogger("segflow.coordinator")


class RestoreChecks:
    def __init__(self, catalog: Catalog, settings: CheckpointSettings, layout: dict):
        self.catalog, self.settings, self.layout = catalog, settings, layout

    def held_by_other_protocols(self) -> str:
        """What the store holds of this job that only protocols of the other kind restore
        (empty: nothing), for a restore that found nothing of its own protocol's."""
        if self.settings.protocol.uncoordinated:
            complete = self.catalog.complete_ids()
            return (f"the store holds complete checkpoints of it ({', '.join(map(str, complete[-3:]))}), which "
                    "only the aligned, unaligned and segment protocols restore" if complete else "")
        if self.catalog.backend.get(self.catalog.stable_line_key()) is None:
            return ""
        return "the store holds a stable line of its local checkpoints, which only the uncoordinated and cic " \
               "protocols restore"

    def nothing_of_this_protocol(self, refusal: str) -> None:
        """A restore found nothing this protocol restores: ``--restore latest`` is refused
        with ``refusal`` (empty: ``auto``, which starts afresh), saying what the store holds
        that another protocol restores; ``auto`` warns of it."""
        held = self.held_by_other_protocols()
        if self.settings.restore == "latest":
            raise SegflowError(f"{refusal}{'; ' + held if held else ''} (use --restore auto to start afresh when "
                               "there is none)")
        if held:
            event(log, logging.WARNING, "starting afresh", job=self.settings.job_name,
                  protocol=self.settings.protocol.value, reason=held)

    def same_history(self) -> None:
        """Refuse ``latest``/``auto`` after a run under a protocol of the other kind: the
        job's newest state is that run's, which this protocol cannot restore, and what it
        can restore is older (a complete checkpoint before that run, or a stable line
        before it). Going back to it lost output (210 of 3900 lines after aligned, cic,
        aligned); starting afresh would process the input again."""
        last = self.catalog.last_protocol()
        protocol = self.settings.protocol
        if not last or CheckpointProtocol.parse(last).uncoordinated == protocol.uncoordinated:
            return
        if protocol.uncoordinated:
            taken, restorers, back = ("complete checkpoints", "aligned, unaligned or segment",
                                      "any stable line the store holds is older than that run")
        else:
            taken, restorers, back = ("local checkpoints", "uncoordinated or cic",
                                      "any complete checkpoint the store holds is older than that run: name "
                                      "one to go back to it (--restore ID)")
        raise SegflowError(f"job {self.settings.job_name!r} last ran under the {last} protocol, whose {taken} "
                           f"the {protocol.value} protocol does not restore ({back}). "
                           f"Restore it with --checkpoint-protocol {restorers}, or run afresh without --restore "
                           "(a StreamJob: upgradeMode stateless)")

    def same_layout(self, checkpoint_id: int) -> None:
        """Refuse to restore this job's checkpoint ``checkpoint_id`` (0: none) if another
        pipeline took it."""
        if checkpoint_id:
            self.refuse_other_layout((self.catalog.metadata(checkpoint_id) or {}).get("layout"),
                                     f"checkpoint {checkpoint_id} of job {self.settings.job_name!r}")

    def refuse_other_layout(self, stored: dict | None, what: str) -> None:
        """Refuse to restore ``what``, taken by a pipeline laid out as ``stored``, if this
        pipeline is laid out otherwise: its states would be handed to the wrong operators.
        Checkpoints taken before layouts were recorded (``None``) restore as before."""
        difference = layout_difference(stored, self.layout) if stored else ""
        if difference:
            raise SegflowError(f"{what} was taken by a pipeline laid out differently ({difference}): its states "
                               "would go to other operators. Restore it with the pipeline that took it, or run "
                               "this one afresh (without --restore; a StreamJob: upgradeMode stateless)")
