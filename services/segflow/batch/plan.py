"""Which epochs of a sink's output the batch stage may process next (pure).

A sink replica publishes its parts ``part-NNNNN-eK.<ext>`` on its own, and may defer a
publish while its store is down, so a part of epoch K says nothing about the other
replicas. Each replica therefore records ``_committed/part-NNNNN`` = ``{"epoch": K,
"replicas": n}`` once every epoch up to K of its own is published
(:class:`segflow.runtime.operators.two_phase.PartSink`). Epoch K is *committed* when all n
replicas have a marker with epoch >= K (``committed_through`` in ``two_phase``, where the
sinks use it too); only committed epochs are processed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..runtime.elements import FINAL_CHECKPOINT
from ..runtime.operators.two_phase import published_part

_PARTITION = re.compile(r"^epochs=(\d+)-(?:\d+|end)/")


@dataclass(frozen=True)
class EpochRange:
    """Epochs ``first..last`` inclusive; ``last`` may be FINAL_CHECKPOINT (the job's end)."""
    first: int
    last: int

    def __contains__(self, epoch: int) -> bool:
        return self.first <= epoch <= self.last

    @property
    def label(self) -> str:
        """``3-7``, ``8-end``: names the range's Parquet partition and log lines."""
        return f"{self.first}-{'end' if self.last == FINAL_CHECKPOINT else self.last}"


def next_range(committed: int, processed: int) -> EpochRange | None:
    """The epochs to process after ``processed`` (the last one processed, 0 for none), or
    None when nothing new is committed."""
    if committed <= processed:
        return None
    return EpochRange(processed + 1, committed)


def parts_in(names: list[str], epochs: EpochRange) -> list[str]:
    """The published parts of ``epochs`` among ``names``, in epoch then replica order."""
    chosen = [(part[1], name) for name in names if (part := published_part(name)) and part[1] in epochs]
    return [name for _, name in sorted(chosen)]


def partition(epochs: EpochRange) -> str:
    """The stage's output object for ``epochs``: one Parquet file per processed range."""
    return f"epochs={epochs.label}/part-0.parquet"


def leftovers(names: list[str], processed: int) -> list[str]:
    """Output objects of ranges after ``processed``: written by a run that stopped before
    recording its progress. The next run covers those epochs again (perhaps as a longer
    range, so under another name) and removes these first, so no epoch counts twice."""
    return [name for name in names if (m := _PARTITION.match(name)) and int(m.group(1)) > processed]
