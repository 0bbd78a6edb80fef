"""The stage's progress record, ``<output>/_batch_stage/progress.json``:

``{"lastEpoch": K, "lastRun": {"epochs": "3-7", "first": 3, "last": 7, "seconds": 1.2,
"records": 900, "rows": 40, "error": "", "at": "2026-01-01T00:00:00Z"}}``

``lastEpoch`` is the newest epoch whose result is in the output (FINAL_CHECKPOINT once the
job's end is processed); it is written after the result, so a restart continues where the
stage stopped. ``lastRun`` is the newest attempt, failed or not (it is what a StreamJob's
``status.batchStage`` shows).
"""
from __future__ import annotations

import datetime
import json

from ..runtime.elements import FINAL_CHECKPOINT
from ..state.backend import StateBackend
from .plan import EpochRange

KEY = "_batch_stage/progress.json"


def run_record(epochs: EpochRange, seconds: float, records: int, rows: int, error: str) -> dict:
    at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"epochs": epochs.label, "first": epochs.first, "last": epochs.last, "seconds": round(seconds, 3),
            "records": records, "rows": rows, "error": error, "at": at}


def advanced(progress: dict, run: dict) -> dict:
    """The progress after ``run``: it moves on only if the run succeeded."""
    last = progress.get("lastEpoch", 0) if run["error"] else run["last"]
    return {"lastEpoch": last, "lastRun": run}


def finished(progress: dict) -> bool:
    """Whether the job's final epoch has been processed."""
    return progress.get("lastEpoch", 0) == FINAL_CHECKPOINT


def load(store: StateBackend) -> dict:
    """The progress record, or an empty one before the first run."""
    data = store.get(KEY)
    return json.loads(data) if data else {"lastEpoch": 0}


def save(store: StateBackend, progress: dict) -> None:
    store.put(KEY, json.dumps(progress, sort_keys=True).encode())


def summary(progress: dict) -> dict:
    """The progress as a StreamJob shows it in ``status.batchStage`` (the final epoch as
    ``end``)."""
    last = progress.get("lastEpoch", 0)
    shown: dict[str, object] = {"lastEpoch": "end" if last == FINAL_CHECKPOINT else str(last)}
    run = progress.get("lastRun")
    if run:
        shown["lastRun"] = {k: run[k] for k in ("epochs", "seconds", "records", "rows", "error", "at") if k in run}
    return shown
