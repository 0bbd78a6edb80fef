"""``segflow``: run a job, show its plan, or run the demo.

Errors that segflow raises on purpose are printed as one clear message (exit 1); only a
bug in segflow itself shows a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..api.environment import Config
from ..errors import SegflowError
from ..jobs.loader import JobSpec, build_job, parse_params
from ..plan.placement import Worker, plan
from ..plan.render import render_dot, render_text
from .progress import Progress, human


def _job_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job module: a path to a .py file or an importable module name")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter for the job's build(env, **params); repeatable")
    parser.add_argument("--function", default="build", help="the job's build function (default: build)")
    parser.add_argument("--parallelism", type=int, default=1, metavar="N",
                        help="replicas of every parallel block (default: 1)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="segflow", description="Stream and batch processing in Python.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a job to completion")
    _job_arguments(run)
    run.add_argument("--quiet", action="store_true", help="no progress and no summary")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--threads", dest="runtime", action="store_const", const="threads",
                       help="run every replica in this process (the default for parallelism 1)")
    where.add_argument("--processes", dest="runtime", action="store_const", const="processes",
                       help="a coordinator and one worker process per replica slot "
                            "(the default for parallelism > 1)")
    worker = commands.add_parser("worker", help="a worker service (started by segflow run or a pod)")
    worker.add_argument("--coordinator", required=True, metavar="HOST:PORT")
    worker.add_argument("--name", required=True, help="unique worker name")
    worker.add_argument("--host", default="127.0.0.1", help="address to serve the data plane and metrics on")
    worker.add_argument("--slots", type=int, default=1, help="replicas of each parallel block it takes")
    coordinator = commands.add_parser("coordinator", help="a job's coordinator service")
    _job_arguments(coordinator)
    coordinator.add_argument("--workers", type=int, required=True, help="workers to wait for")
    coordinator.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT")
    show = commands.add_parser("plan", help="print the job graph, blocks, replicas and edge strategies")
    _job_arguments(show)
    show.add_argument("--format", choices=["text", "dot"], default="text")
    demo = commands.add_parser("demo", help="word count over a generated corpus; prints the top words")
    demo.add_argument("--size-mb", type=float, default=20, help="corpus size in MiB (default: 20)")
    demo.add_argument("--parallelism", type=int, default=1, metavar="N")
    return parser


def _spec(args: argparse.Namespace) -> JobSpec:
    return JobSpec(args.job, args.function, parse_params(args.param))


def cmd_run(args: argparse.Namespace) -> int:
    progress = Progress(enabled=None if not args.quiet else False)
    runtime = args.runtime or ("processes" if args.parallelism > 1 else "threads")
    env, _ = build_job(_spec(args), Config(parallelism=args.parallelism, runtime=runtime))
    try:
        result = env.execute(on_progress=progress)
    finally:
        progress.finish()
    if not args.quiet:
        read = sum(n for block, n in result.records_in.items() if env.graph.blocks[block].is_source
                   or _fed_by_source(env.graph, block))
        rate = read / result.seconds if result.seconds > 0 else 0.0
        print(f"segflow: done in {result.seconds:.2f} s, {read:,} source records "
              f"({human(rate)} records/s)", file=sys.stderr)
    return 0


def _fed_by_source(graph, block_id: int) -> bool:
    return any(graph.blocks[e.src].is_source for e in graph.inputs_of(block_id))


def cmd_plan(args: argparse.Namespace) -> int:
    spec = _spec(args)
    from ..jobs.loader import load_job, missing_parameters
    placeholders = {name: f"<{name}>" for name in missing_parameters(load_job(spec), spec)}
    spec.params.update(placeholders)
    env, _ = build_job(spec, Config(parallelism=args.parallelism, planning_only=True))
    execution = plan(env.graph, [Worker("local", args.parallelism)])
    if args.format == "dot":
        sys.stdout.write(render_dot(execution))
    else:
        if placeholders:
            print(f"(parameters not given, shown as placeholders: {', '.join(placeholders)})")
        sys.stdout.write(render_text(execution))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from ..observability.logs import configure
    from ..worker.service import WorkerService
    configure(f"worker {args.name}")
    return WorkerService(args.name, args.coordinator, args.host, args.slots).run()


def cmd_coordinator(args: argparse.Namespace) -> int:
    from ..coordinator.service import serve
    from ..observability.logs import configure
    configure("coordinator")
    return serve(_spec(args), args.workers, args.listen)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    return run_demo(args.size_mb, args.parallelism)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"run": cmd_run, "plan": cmd_plan, "demo": cmd_demo, "worker": cmd_worker,
               "coordinator": cmd_coordinator}[args.command]
    try:
        return handler(args)
    except SegflowError as exc:
        print(f"segflow: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("segflow: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
