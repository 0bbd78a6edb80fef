"""``segflow``: run a job, show its plan or run the demo; take a savepoint of a running job; read
a state store's checkpoints; and the commands a job's own processes run (coordinator, worker,
batch-stage).

Errors that segflow raises on purpose are printed as one clear message (exit 1); only a
bug in segflow itself shows a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Iterator, NoReturn, Sequence

from ..redaction import redact
from ..checkpoint.protocols import CheckpointProtocol
from ..errors import SegflowError
from ..settings import CheckpointSettings, Config
from ..extras import require
from ..suggestions import did_you_mean
from . import batch, checkpoint_args, segment_advice_args
from .progress_bar import Progress, expected_records, human

if TYPE_CHECKING:
    from ..api.environment import StreamEnvironment
    from ..jobs.loader import JobModule


def _job_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job module: a path to a .py file or an importable module name")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter for the job's build(env, **params); repeatable")
    parser.add_argument("--function", default="build", help="the job's build function (default: build)")
    parser.add_argument("--parallelism", type=int, default=1, metavar="N",
                        help="replicas of every parallel block (default: 1)")


def _checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("checkpoints (exactly-once output, recovery, savepoints)")
    group.add_argument("--checkpoint-protocol", choices=[p.value for p in CheckpointProtocol],
                       default=None, help="snapshot protocol (default: none, or what the job's config says)")
    group.add_argument("--checkpoint-interval", type=float, default=None, metavar="SECONDS",
                       help="seconds between checkpoints (default: 5)")
    group.add_argument("--state", default=None, metavar="URL",
                       help="state store: file:///dir, redis://host:port/db or s3://bucket/prefix")
    group.add_argument("--s3-endpoint", default=None, metavar="URL",
                       help="S3 endpoint for s3:// state (default: $AWS_ENDPOINT_URL)")
    group.add_argument("--retain", type=int, default=None,
                       help="complete checkpoints to keep; uncoordinated/cic: stable lines per replica (default: 3)")
    group.add_argument("--restore", default=None, metavar="ID|latest|auto|LOCATION",
                       help="start from this complete checkpoint of the job in --state (auto: the latest if there "
                            "is one, else from the start; uncoordinated/cic: the stored stable line; a job that "
                            "finished resumes from its end, which 'final' names), or from "
                            "another job's savepoint at LOCATION (STORE/jobs/JOB/chk-N/, as segflow savepoint "
                            "prints it)")
    group.add_argument("--job-name", default=None, help="names the job's snapshots (default: the module name)")
    group.add_argument("--savepoint-interval", type=float, default=None, metavar="SECONDS",
                       help="keep a complete checkpoint as a savepoint this often (default: only on request)")
    group.add_argument("--savepoint-retain", type=int, default=None, metavar="N",
                       help="savepoints to keep, newest first (default: all)")
    group.add_argument("--savepoint-max-age", type=float, default=None, metavar="SECONDS",
                       help="delete savepoints older than this (default: never)")
    group.add_argument("--connectors", default=None, metavar="auto|none|ID,ID...",
                       help="with --checkpoint-protocol segment: the blocks that keep pending windows, as "
                            "`segflow plan` numbers them (sources and sinks always do; default: auto)")
    group.add_argument("--placement", choices=["spread", "segment"], default=None,
                       help="spread (default): every block's replicas over every worker; segment (with "
                            "--checkpoint-protocol segment): each segment's blocks on workers of their own, so a "
                            "lost worker restarts fewer blocks; --parallelism is then the number of workers, "
                            "shared out among the segments (`segflow plan` shows the result)")
    group.add_argument("--window-memory", type=float, default=None, metavar="MIB",
                       help="with --checkpoint-protocol segment: window parts each connector replica keeps in "
                            "memory for a regional recovery's replay while checkpoints do not complete; beyond "
                            "it the oldest are read back from the store instead (default: 64)")


def _checkpoint_settings(args: argparse.Namespace) -> dict:
    """The checkpoint options given on the command line, as Config fields."""
    given = {"checkpoint_protocol": args.checkpoint_protocol, "checkpoint_interval": args.checkpoint_interval,
             "state_url": args.state, "s3_endpoint": args.s3_endpoint or os.environ.get("AWS_ENDPOINT_URL"),
             "retain": args.retain, "restore": args.restore, "job_name": args.job_name,
             "connectors": args.connectors, "savepoint_interval": args.savepoint_interval,
             "savepoint_retain": args.savepoint_retain, "savepoint_max_age": args.savepoint_max_age,
             "placement": args.placement, "window_memory_mb": args.window_memory}
    return {k: v for k, v in given.items() if v is not None}


class _VersionAction(argparse.Action):
    """``--version``, with the version looked up only when asked: argparse's own action
    takes the text when the parser is built, and ``importlib.metadata`` cost every command
    (every coordinator and worker of a local run among them) 8-20 ms of start-up."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the version and exit", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__
        print(f"segflow {__version__}")
        parser.exit()


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {port}")
    return port


def _metrics_arguments(parser: argparse.ArgumentParser, serves: str) -> None:
    parser.add_argument("--metrics-port", type=_port, default=0, metavar="PORT",
                        help=f"where {serves} are served (default 0: a free port, printed at start)")
    parser.add_argument("--metrics-host", default="", metavar="HOST",
                        help="the address to serve them on (default: the service's own; 0.0.0.0 in a pod lets "
                             "kubectl port-forward reach them)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="segflow", description="Stream and batch processing in Python.")
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a job to completion")
    _job_arguments(run)
    run.add_argument("--quiet", action="store_true", help="no progress and no summary")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--threads", dest="runtime", action="store_const", const="threads",
                       help="run every replica in this process (the default for parallelism 1)")
    where.add_argument("--processes", dest="runtime", action="store_const", const="processes",
                       help="a coordinator and one worker process per replica slot "
                            "(the default for parallelism > 1 and with checkpoints)")
    run.add_argument("--standby-workers", type=int, default=0, metavar="K",
                     help="keep K more worker processes started and idle; a lost worker's replicas go to one "
                          "of them, which restores them, instead of waiting for a new process (default: 0)")
    run.add_argument("--engine", choices=["segflow", "spark"], default="segflow",
                     help="segflow (default) or spark: translate the bounded job into PySpark and run it there")
    run.add_argument("--spark-master", metavar="URL", default=None,
                     help="with --engine spark: local[N] (default local[PARALLELISM]), spark://host:port or k8s://...")
    _checkpoint_arguments(run)
    batch.add_run_options(run)
    worker = commands.add_parser("worker", help="a worker service (started by segflow run or a pod)")
    worker.add_argument("--coordinator", required=True, metavar="HOST:PORT",
                        help="the job's coordinator; - to read it from stdin (a worker started before it listens)")
    worker.add_argument("--name", required=True, help="unique worker name")
    worker.add_argument("--host", default="127.0.0.1", help="address to serve the data plane and metrics on")
    worker.add_argument("--slots", type=int, default=1, help="replicas of each parallel block it takes")
    worker.add_argument("--standby", action="store_true",
                        help="register as a standby: wait idle, ready to take over a lost worker's replicas")
    worker.add_argument("--await-lease", action="store_true",
                        help="a warm standby cluster's worker: wait for the job as long as its coordinator stands "
                             "by for the lease, not 120 s")
    worker.add_argument("--follow", type=CheckpointSettings.from_json, default=None, metavar="JSON",
                        help="a hot standby cluster's worker: follow the store of the job these checkpoint settings "
                             "name (read-only) while it waits, and restore from what it followed at the takeover")
    _metrics_arguments(worker, "/metrics")
    coordinator = commands.add_parser("coordinator", help="a job's coordinator service")
    _job_arguments(coordinator)
    coordinator.add_argument("--workers", type=int, required=True, help="workers to wait for")
    coordinator.add_argument("--standby-workers", type=int, default=0, metavar="K",
                             help="idle workers to keep registered, each ready to take over a lost worker")
    coordinator.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT")
    _metrics_arguments(coordinator, "/metrics and the web view")
    coordinator.add_argument("--spawn-workers", action="store_true",
                             help="start the workers as local processes (and again after losing one), with "
                                  "the certificates read from stdin (one JSON line, which segflow run writes)")
    coordinator.add_argument("--parent", type=int, metavar="PID",
                             help="cancel the job once process PID, which started this coordinator, is gone "
                                  "(segflow run passes its own)")
    coordinator.add_argument("--settings", type=CheckpointSettings.from_json, default=CheckpointSettings(),
                             metavar="JSON", help="checkpoint settings as CheckpointSettings.to_json() writes them "
                                                  "(default: no checkpoints)")
    save = commands.add_parser("savepoint", help="take a savepoint of a running local job")
    save.add_argument("job_name", nargs="?", help="the running job (default: the only one)")
    save.add_argument("--coordinator", metavar="HOST:PORT", help="the job's coordinator, if not local")
    show = commands.add_parser("plan", help="print the job graph, blocks, replicas and edge strategies")
    _job_arguments(show)
    show.add_argument("--format", choices=["text", "dot"], default="text")
    show.add_argument("--state", default="", metavar="URL", help="with --segment-backup: the store to time")
    show.add_argument("--s3-endpoint", default=None, metavar="URL", help="S3 endpoint for s3:// --state")
    show.add_argument("--connectors", default=None, metavar="auto|none|ID,ID...",
                      help="show the job as segment backup runs it with these connectors: each block's segment, "
                           "and its workers (one per --parallelism, as segflow run starts them)")
    show.add_argument("--placement", choices=["spread", "segment"], default=None,
                      help="with segment backup: the placement to show (default: spread)")
    segment_advice_args.add_arguments(show)
    demo = commands.add_parser("demo", help="a job on worker processes with checkpoints; a worker is killed, the job "
                                            "recovers, and the output is checked exactly")
    demo.add_argument("--readings", type=int, default=80_000, help="sensor readings to generate (default: 80000)")
    demo.add_argument("--rate", type=float, default=4_000, help="readings per second (default: 4000)")
    demo.add_argument("--parallelism", type=int, default=2, metavar="N", help="worker processes (default: 2)")
    demo.add_argument("--no-kill", dest="kill", action="store_false", help="let the job run without a failure")
    batch.add_command(commands)
    checkpoint_args.add_command(commands)
    return parser


# The job loader, the API and the planner are imported where a command needs them: the
# coordinator and worker commands start the processes of every local run, and the sooner
# they get going the sooner the job does.
def _spec(args: argparse.Namespace) -> JobModule:
    from ..jobs.loader import JobModule, parse_params
    return JobModule(args.job, args.function, parse_params(args.param))


def _build(spec: JobModule, config: Config) -> StreamEnvironment:
    from ..jobs.loader import build_job
    return build_job(spec, config)[0]


def _run_on_segflow(args: argparse.Namespace, settings: dict) -> tuple:
    progress = Progress(enabled=None if not args.quiet else False)
    runtime = args.runtime or ("processes" if args.parallelism > 1 else "auto")
    env = _build(_spec(args), Config(parallelism=args.parallelism, runtime=runtime,
                                     standby_workers=args.standby_workers, **settings))
    progress.expect(expected_records(env.graph))

    def announce(text: str) -> None:
        progress.say(f"segflow: {redact(text)}")
    try:
        result = env.execute(on_progress=progress, on_event=announce)
    finally:
        progress.finish()
    return env, result


def _run_on_spark(args: argparse.Namespace, settings: dict) -> tuple:
    if args.runtime or set(settings) - {"s3_endpoint"}:
        raise SegflowError("--engine spark runs the job as a Spark batch: drop --threads/--processes and the "
                           "checkpoint options")
    require("pyspark", "--engine spark")
    from ..spark import run_on_spark
    env = _build(_spec(args), Config(parallelism=args.parallelism))
    return env, run_on_spark(env, args.spark_master or f"local[{args.parallelism}]")


_IMPORTED = time.monotonic()


def _process_age() -> float:
    """Seconds since this process started, interpreter start-up and imports included (from
    /proc on Linux; elsewhere since this module was imported)."""
    try:
        with open("/proc/self/stat") as f:
            after_name = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - int(after_name[19]) / os.sysconf("SC_CLK_TCK")     # field 22: starttime
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _IMPORTED


@contextlib.contextmanager
def _interrupted_by_termination() -> Iterator[None]:
    """While the body runs, SIGTERM and SIGHUP stop ``segflow run`` as Ctrl-C does,
    cancelling the job and stopping every process it started; by default they would end
    this process alone. A signal ignored already stays so (``nohup segflow run`` outlives
    its terminal); off the main thread (``main`` called from a thread) nothing changes."""
    def interrupt(signum: int, _frame) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)
    replaced = {}
    if threading.current_thread() is threading.main_thread():
        for termination in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(termination) is signal.SIG_DFL:
                replaced[termination] = signal.signal(termination, interrupt)
    try:
        yield
    finally:
        for termination, previous in replaced.items():
            signal.signal(termination, previous)


def cmd_run(args: argparse.Namespace) -> int:
    with _interrupted_by_termination():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    settings = _checkpoint_settings(args)
    if args.engine == "spark":
        if args.batch_stage:
            raise SegflowError("--batch-stage runs beside a streaming job: drop --engine spark")
        env, result = _run_on_spark(args, settings)
    elif args.spark_master:
        raise SegflowError("--spark-master needs --engine spark")
    else:
        with batch.beside_job(args, _spec(args).params, settings):
            env, result = _run_on_segflow(args, settings)
    if not args.quiet:
        read = sum(n for block, n in result.records_in.items() if env.graph.blocks[block].is_source)
        rate = read / result.seconds if result.seconds > 0 else 0.0
        extra = ""
        if getattr(result, "last_checkpoint", 0):
            from ..runtime.elements import checkpoint_label
            extra = f"; last checkpoint {checkpoint_label(result.last_checkpoint)}, {result.recoveries} recoveries"
        wall = _process_age()
        print(f"segflow: done in {wall:.2f} s ({wall - result.seconds:.2f} s starting and stopping, "
              f"{result.seconds:.2f} s running), {read:,} source records ({human(rate)} records/s while "
              f"running){extra}", file=sys.stderr)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    spec = _spec(args)
    if args.segment_backup:
        env = _build(spec, Config())
        from .segment_advice import advise
        advise(env.graph, args, args.state, args.s3_endpoint or os.environ.get("AWS_ENDPOINT_URL"),
               args.job_name or spec.default_name())
        return 0
    from ..jobs.loader import load_job, missing_parameters
    from ..plan.placement import Worker, plan
    from ..plan.render import render_dot, render_text
    placeholders = {name: f"<{name}>" for name in missing_parameters(load_job(spec), spec)}
    spec.params.update(placeholders)
    env = _build(spec, Config(parallelism=args.parallelism, planning_only=True))
    if args.connectors or args.placement:
        from .segment_layout import segment_plan
        execution, roles, note = segment_plan(env.graph, args.parallelism, args.connectors or "auto",
                                              args.placement or "spread")
    else:
        execution, roles, note = plan(env.graph, [Worker("local", args.parallelism)]), None, ""
    if args.format == "dot":
        sys.stdout.write(render_dot(execution))
    else:
        if placeholders:
            print(f"(parameters not given, shown as placeholders: {', '.join(placeholders)})")
        if note:
            print(note)
        sys.stdout.write(render_text(execution, roles))
    return 0


def _checkpoints(args: argparse.Namespace) -> int:
    from .checkpoints import cmd_checkpoints
    return cmd_checkpoints(args)


def cmd_worker(args: argparse.Namespace) -> int:
    from ..observability.logs import configure
    from ..runtime.collection import collect_less_often
    from ..worker.service import WorkerService
    configure(f"worker {args.name}")
    collect_less_often()
    return WorkerService(args.name, args.coordinator, args.host, args.slots, args.metrics_port,
                         args.metrics_host, standby=args.standby, await_lease=args.await_lease,
                         follow=args.follow).run()


def cmd_coordinator(args: argparse.Namespace) -> int:
    from ..coordinator.spawner import WorkerSpawner, local_identities, read_stdin_line
    from ..observability.logs import configure
    from ..security.identity_env import identity_from_env
    configure("coordinator")
    spawner = None
    if args.spawn_workers:
        # First, before the coordinator has a thread or a gRPC object: the workers are forked
        # from here with their modules imported already (see coordinator/spawner.py).
        from ..runtime import collection  # noqa: F401
        from ..worker import service  # noqa: F401
        identities = local_identities(args.workers + args.standby_workers, identity_from_env().ca,
                                      read_stdin_line())
        settings = args.settings.named(_spec(args).default_name())
        spawner = WorkerSpawner(args.workers, identities, standby=args.standby_workers,
                                follow=settings.to_json() if settings.follow_interval else "")
        spawner.fork_all(main)
    try:
        from ..coordinator.service import serve
        code = serve(_spec(args), args.workers, args.listen, args.settings, spawner=spawner,
                     standby_workers=args.standby_workers,
                     metrics_port=args.metrics_port, metrics_host=args.metrics_host, parent=args.parent)
    finally:
        if spawner is not None:
            spawner.stop_all()
    _end_process(code)


def _end_process(code: int) -> NoReturn:
    """A coordinator whose job is over has stopped its workers and servers and tidied the
    state store: it ends here at once. The interpreter's own finalisation (gRPC's threads
    and objects) took another 0.1-0.3 s, which every local run waited for."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def cmd_savepoint(args: argparse.Namespace) -> int:
    from ..launcher.processes import savepoint
    taken = savepoint(args.job_name, args.coordinator)
    print(f"savepoint {taken.checkpoint_id} at {taken.location}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    return run_demo(args.readings, args.rate, args.parallelism, args.kill)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; a mistyped command or option is refused by the parser it belongs to
    (its usage, not the top level's), with the nearest known name."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    if argv and not argv[0].startswith("-") and argv[0] not in commands:
        parser.error(f"no command {argv[0]!r}{did_you_mean(argv[0], commands)}; commands: {', '.join(commands)}")
    args, extras = parser.parse_known_args(argv)
    if extras:
        command = commands[args.command]
        options = [o for action in command._actions for o in action.option_strings]
        typed = " ".join(extra + (did_you_mean(extra.split("=")[0], options) if extra.startswith("-") else "")
                         for extra in extras)
        command.error(f"unrecognized arguments: {typed}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    handler = {"run": cmd_run, "plan": cmd_plan, "demo": cmd_demo, "worker": cmd_worker,
               "coordinator": cmd_coordinator, "savepoint": cmd_savepoint,
               "batch-stage": batch.cmd_batch_stage, "checkpoints": _checkpoints}[args.command]
    try:
        return handler(args)
    except SegflowError as exc:
        print(f"segflow: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print(f"segflow: interrupted ({exc})" if str(exc) else "segflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of stdout left early (``segflow plan | head``): end quietly, as a shell tool
    killed by SIGPIPE does. Stdout is pointed at /dev/null first, or the interpreter's own flush
    at exit would raise the same error again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
