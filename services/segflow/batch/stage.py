"""The batch stage's loop: at each trigger, process the epochs committed since the last
run as one range, write the result, then record the progress.

Exactly once per epoch: a run writes its range's Parquet object first and the progress
record after it. A stage stopped in between (killed, its pod lost) finds the old progress
at its restart, removes the orphaned object (:func:`plan.leftovers`) and processes those
epochs again, with any committed since, so each epoch is in exactly one output object
named by a recorded range.

A run that fails (the user's function raised, a store was unreachable) is recorded in
``lastRun.error`` without advancing, and retried at the next trigger, at the earliest
``RETRY_SECONDS`` later: the stage itself keeps running, as a sidecar should.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Callable

from ..errors import SegflowError
from ..jobs.loader import JobModule, load_job
from ..observability.logs import event
from ..runtime.operators.two_phase import COMMITTED, MarkerError, committed_through, parse_markers
from ..state.backend import StateBackend
from . import progress as record
from .parquet import write_parquet
from .plan import EpochRange, leftovers, next_range, partition, parts_in
from .records import read_lines, to_dataframe

log = logging.getLogger("segflow.batch")
ON_CHECKPOINT_POLL = 1.0
RETRY_SECONDS = 5.0
ERROR_CHARS = 1000


def trigger_period(trigger: str) -> float:
    """Seconds between checks for newly committed epochs: about one per second for
    ``onCheckpoint`` (a run follows each completed checkpoint), else the interval given."""
    if trigger == "onCheckpoint":
        return ON_CHECKPOINT_POLL
    try:
        seconds = float(trigger)
    except ValueError:
        raise SegflowError(f"trigger must be onCheckpoint or a number of seconds, not {trigger!r}") from None
    if seconds <= 0:
        raise SegflowError(f"a trigger interval must be positive, not {trigger}")
    return seconds


def load_function(module: str, function: str) -> Callable:
    """The user's ``function(spark, records) -> DataFrame`` from a .py file or module."""
    fn = load_job(JobModule(module, function), signature="(spark, records)")
    from pyspark import cloudpickle      # Python UDFs of a file module travel to the executors by value
    cloudpickle.register_pickle_by_value(sys.modules[fn.__module__])
    return fn


def start_afresh(source: StateBackend, output: StateBackend) -> None:
    """Forget an earlier run of the job: the stage's results and progress (the new run
    numbers its epochs from 1 again, which the old progress would skip), and the commit
    markers it left in the sink's output. The job's sinks remove those too, but only when
    they open; until then the stage would take an old final marker for this run's. Call it
    before the job starts: a marker of the new run removed here would only be written again
    at its next checkpoint, and the final one never."""
    output.delete([*output.list("epochs="), record.KEY])
    source.delete(source.list(COMMITTED))


class BatchStage:
    """Runs ``function`` over the committed epochs of the sink output in ``source`` and
    writes the results and progress to ``output``."""

    def __init__(self, source: StateBackend, output: StateBackend, function: Callable, spark_master: str):
        self.source = source
        self.output = output
        self.function = function
        self.spark_master = spark_master
        self.warned = False

    def committed(self) -> int:
        names = self.source.list(COMMITTED)
        contents = {name: data for name in names if (data := self.source.get(name)) is not None}
        return committed_through(parse_markers(contents))

    def run_once(self) -> tuple[dict | None, dict]:
        """Process what is newly committed, if anything: (the run's record or None, the progress)."""
        progress = record.load(self.output)
        committed = self.committed()
        epochs = next_range(committed, progress.get("lastEpoch", 0))
        if epochs is None:
            if 0 < committed < progress.get("lastEpoch", 0) and not self.warned:
                event(log, logging.WARNING, "the sink's committed epochs are behind this stage's progress: "
                      "a fresh run of the job over an old stage output? Start the stage with --fresh",
                      committed=committed, processed=progress["lastEpoch"])
                self.warned = True
            return None, progress
        started = time.monotonic()
        records = rows = 0
        error = ""
        try:
            records, rows = self._process(epochs, progress.get("lastEpoch", 0))
        except Exception as exc:       # the user's code or a store: recorded, and retried next trigger
            error = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
        run = record.run_record(epochs, time.monotonic() - started, records, rows, error)
        progress = record.advanced(progress, run)
        record.save(self.output, progress)
        return run, progress

    def _process(self, epochs: EpochRange, processed: int) -> tuple[int, int]:
        suffix, lines = read_lines(self.source, parts_in(self.source.list("part-"), epochs))
        self.output.delete(leftovers(self.output.list("epochs="), processed))
        if not lines:
            return 0, 0            # the epochs were empty: nothing to write
        from ..spark.session import get_session
        spark = get_session(self.spark_master)
        result = self.function(spark, to_dataframe(spark, suffix, lines))
        if not hasattr(result, "toArrow"):
            raise SegflowError(f"the batch function must return a Spark DataFrame, not {type(result).__name__}")
        return len(lines), write_parquet(result, self.output, partition(epochs))

    def run(self, period: float, until_finished: bool, stop: threading.Event) -> None:
        """Trigger runs every ``period`` seconds until ``stop`` is set (or, with
        ``until_finished``, once the job's final epoch is processed)."""
        while not stop.is_set():
            wait = period
            try:
                run, progress = self.run_once()
            except (SegflowError, MarkerError) as exc:
                event(log, logging.WARNING, "batch stage cannot read its input or progress; retrying",
                      error=str(exc), retry_in=max(period, RETRY_SECONDS))
                wait = max(period, RETRY_SECONDS)
            else:
                if run is not None:
                    event(log, logging.WARNING if run["error"] else logging.INFO, "batch run", **run)
                    if run["error"]:
                        wait = max(period, RETRY_SECONDS)
                if until_finished and record.finished(progress):
                    return
            stop.wait(wait)
