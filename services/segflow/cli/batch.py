"""``segflow batch-stage`` (the StreamJob sidecar's command), and ``segflow run
--batch-stage``: the same stage beside a local streaming job, as a child process.

The stage beside ``segflow run`` reads ``--batch-input``, by default the job's ``output``
parameter (where the examples' sinks write); it needs checkpoints, since only completed
checkpoints commit sink output. Like the job's sinks, it starts afresh unless the job is
restored (``--restore``). When the job has finished, the run waits for the stage to
process the final epoch; if the job fails, the stage is stopped.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from typing import Iterator

from ..errors import SegflowError
from ..extras import require

STOP_GRACE = 10.0


def add_command(commands) -> None:
    stage = commands.add_parser("batch-stage", help="run a PySpark function over a sink's committed epochs")
    stage.add_argument("--input", required=True, metavar="DIR|s3://BUCKET/PREFIX",
                       help="the streaming job's sink output (parts and commit markers)")
    stage.add_argument("--output", required=True, metavar="DIR|s3://BUCKET/PREFIX",
                       help="where Parquet results (epochs=FIRST-LAST/part-0.parquet) and progress go")
    stage.add_argument("--module", required=True, help="the batch function's module: a .py file or a module name")
    stage.add_argument("--function", required=True, help="NAME of def NAME(spark, records) -> DataFrame")
    stage.add_argument("--trigger", default="onCheckpoint", metavar="onCheckpoint|SECONDS",
                       help="run after each newly committed checkpoint (default) or every SECONDS")
    stage.add_argument("--spark-master", default="local[1]", metavar="URL", help="default local[1]")
    stage.add_argument("--s3-endpoint", default=None, metavar="URL", help="default: $AWS_ENDPOINT_URL")
    stage.add_argument("--until-finished", action="store_true",
                       help="exit once the job's final epoch is processed (else run until stopped)")
    stage.add_argument("--parent", type=int, metavar="PID",
                       help="stop once process PID, which started this stage, is gone (segflow run passes its own)")
    stage.add_argument("--fresh", action="store_true",
                       help="first remove earlier results and progress, and the input's commit markers "
                            "(beside a run of the job from the start, before the job starts)")


def add_run_options(run: argparse.ArgumentParser) -> None:
    group = run.add_argument_group("batch stage beside the job (see segflow batch-stage)")
    group.add_argument("--batch-stage", metavar="MODULE.py:FUNCTION", default=None,
                       help="run FUNCTION(spark, records) over the job's committed sink output")
    group.add_argument("--batch-output", metavar="DIR|s3://...", default=None, help="the stage's Parquet output")
    group.add_argument("--batch-input", metavar="DIR|s3://...", default=None,
                       help="the sink output to read (default: the job's output parameter)")
    group.add_argument("--batch-trigger", metavar="onCheckpoint|SECONDS", default="onCheckpoint")


def cmd_batch_stage(args: argparse.Namespace) -> int:
    require("pyspark", "the batch stage")
    require("pyarrow", "the batch stage")
    from ..batch.location import open_location
    from ..batch.stage import BatchStage, load_function, start_afresh, trigger_period
    from ..coordinator.parent import watch_parent
    from ..observability.logs import configure, event
    from ..spark.session import get_session
    configure("batch-stage", os.environ.get("SEGFLOW_LOG_LEVEL") or "info")
    period = trigger_period(args.trigger)
    function = load_function(args.module, args.function)
    source, output = open_location(args.input, args.s3_endpoint), open_location(args.output, args.s3_endpoint)
    if args.fresh:
        start_afresh(source, output)
    stage = BatchStage(source, output, function, args.spark_master)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.parent is not None:
        threading.Thread(target=watch_parent, args=(args.parent, lambda _reason: stop.set(), stop),
                         name="parent-watch", daemon=True).start()
    get_session(args.spark_master)       # now, not at the first run: it takes seconds, and may fail
    event(logging.getLogger("segflow.batch"), logging.INFO, "batch stage ready", input=args.input,
          output=args.output, trigger=args.trigger)
    stage.run(period, args.until_finished, stop)
    return 0


def _stage_input(args: argparse.Namespace, params: dict[str, str]) -> str:
    source = args.batch_input or params.get("output")
    if not source:
        raise SegflowError("--batch-stage reads the job's sink output: give --batch-input DIR, or run a job "
                           "with an output parameter")
    return source


def _stage_command(args: argparse.Namespace, source: str, settings: dict) -> list[str]:
    module, sep, function = (args.batch_stage or "").rpartition(":")
    if not sep or not module or not function:
        raise SegflowError(f"--batch-stage takes MODULE.py:FUNCTION, not {args.batch_stage!r}")
    if not args.batch_output:
        raise SegflowError("--batch-stage needs --batch-output DIR (or s3://bucket/prefix) for its Parquet results")
    if settings.get("checkpoint_protocol", "none") == "none":
        raise SegflowError("--batch-stage processes what completed checkpoints commit: add "
                           "--checkpoint-protocol aligned (and --state URL)")
    command = [sys.executable, "-m", "segflow.cli.main", "batch-stage", "--input", source,
               "--output", args.batch_output, "--module", module, "--function", function,
               "--trigger", args.batch_trigger, "--until-finished", "--parent", str(os.getpid())]
    if settings.get("s3_endpoint"):
        command += ["--s3-endpoint", settings["s3_endpoint"]]
    return command


@contextlib.contextmanager
def beside_job(args: argparse.Namespace, params: dict[str, str], settings: dict) -> Iterator[None]:
    """Run the batch stage while the body runs the job; then wait for the stage to process
    the final epoch. Without ``--batch-stage``, nothing."""
    if args.batch_stage is None:
        if args.batch_output or args.batch_input:
            raise SegflowError("--batch-output and --batch-input need --batch-stage MODULE.py:FUNCTION")
        yield
        return
    source = _stage_input(args, params)
    command = _stage_command(args, source, settings)
    if not settings.get("restore"):      # the job runs from the start: so does the stage, before the job
        require("pyarrow", "--batch-stage")
        from ..batch.location import open_location
        from ..batch.stage import start_afresh
        endpoint = settings.get("s3_endpoint")
        start_afresh(open_location(source, endpoint), open_location(args.batch_output, endpoint))
    from ..launcher.processes import stop_group
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
        print("segflow: the job finished; waiting for the batch stage to process the final epoch",
              file=sys.stderr, flush=True)
        code = child.wait()
        if code != 0:
            raise SegflowError(f"the batch stage exited with code {code}; its log is above")
    finally:
        # its process group: the stage and its Spark JVM (SIGTERM stops the stage between runs)
        stop_group(child, grace=STOP_GRACE)
