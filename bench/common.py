"""Helpers shared by the benchmarks: paths, timing, robust statistics, and running
``segflow run`` as a subprocess while watching its structured logs.

Why a subprocess and not ``run_job`` in-process: the checkpointing bench kills a worker
mid-run and reads the coordinator's and workers' log lines (checkpoint complete,
recovering, restored), which only the CLI's process tree produces.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEGFLOW = os.path.join(os.path.dirname(sys.executable), "segflow")
RESULTS = os.path.join(ROOT, "bench", "results")
DONE = re.compile(r"done in [\d.]+ s \([\d.]+ s starting and stopping, ([\d.]+) s running\), ([\d,]+) source records")
STOP_GRACE = 15.0


def report(bench: str, result: dict, argv: list[str] | None = None) -> str:
    """Print a bench's result as its last line, and keep it as a results file
    ``bench/results/<bench>/<UTC date>-<short commit>.json`` (``-2``, ``-3``... for a
    later run of the same day and commit): docs/benchmarks/index.md is generated from
    these files (``python -m segflow.reference --write``), so a published figure is a
    recorded run, with its machine, date and commit, and never a number typed by hand.
    Returns the file's path."""
    print(json.dumps(result), flush=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    commit = _commit()
    record = {"bench": bench, "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": commit,
              "machine": machine(), "argv": list(sys.argv[1:] if argv is None else argv), "result": result}
    directory = os.path.join(RESULTS, bench)
    os.makedirs(directory, exist_ok=True)
    stem, suffix = f"{now:%Y-%m-%d}-{commit}", 1
    path = os.path.join(directory, f"{stem}.json")
    while os.path.exists(path):
        suffix += 1
        path = os.path.join(directory, f"{stem}-{suffix}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"results: {os.path.relpath(path, ROOT)}", file=sys.stderr, flush=True)
    return path


def machine() -> dict:
    """What the figures depend on, and nothing that names the host."""
    model = None
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    return {"cpu_count": os.cpu_count(), "cpu_model": model or platform.processor() or None,
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.machine()}"}


def _commit() -> str:
    """The checkout's short commit, ``+dirty`` when tracked files differ from it (the
    run measured code no commit holds)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def read_counts(directory: str) -> dict[str, int]:
    """A word count's ``word<TAB>count`` part files, summed."""
    counts: dict[str, int] = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith("part-"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                for line in f:
                    word, _, count = line.rstrip("\n").rpartition("\t")
                    counts[word] = counts.get(word, 0) + int(count)
    return counts


def timed(fn):
    """``(fn(), seconds it took)``."""
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def median(values):
    """The median of the values that are not None (None if there are none)."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def percentile(sorted_values: list, q: float):
    """Nearest-rank percentile ``q`` (0..100) of an already sorted list (None if empty)."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


ProbeLine = tuple[int, int, float]      # (node, record index, unix time the node finished the record)


@dataclass(frozen=True)
class NodeRecovery:
    """How one node of a chain went through a failure, from its probe lines."""

    went_back_at: float | None      # its first record processed again (None: it never rolled back)
    newer_at: float | None          # its first record newer than every one it had processed before


def node_recoveries(lines: list[ProbeLine], failed_at: float) -> dict[int, NodeRecovery]:
    """Per node, when it went back and when it first processed a record newer than any
    before (the thesis's Definition 1, per node: the recovery is complete when the last
    node does). For nodes of one replica each, whose records arrive in index order: a
    record at or below the node's highest index so far is a replay. A node that keeps
    running after the failure (an upstream segment, or a survivor before its replicas are
    stopped) processes newer records at once; when it goes back later, "before" is up to
    that moment, not the failure."""
    by_node: dict[int, list[tuple[float, int]]] = {}
    for node, index, at in lines:
        by_node.setdefault(node, []).append((at, index))
    found = {}
    for node, seen in by_node.items():
        high, before, back, newer = -1, None, None, None     # before: the highest index "before"
        for at, index in sorted(seen):
            if at >= failed_at:
                if before is None:
                    before = high
                if back is None and index <= high:
                    back, before, newer = at, high, None
                elif newer is None and index > before:
                    newer = at
            high = max(high, index)
        found[node] = NodeRecovery(back, newer)
    return found


def past_the_lost_node(lines: list[ProbeLine], sink: int, lost: int, failed_at: float,
                       recovery: NodeRecovery) -> float | None:
    """When ``sink`` first processed, from its recovery (``recovery.newer_at``) on, a record
    the lost node had not processed before ``failed_at``: what only the lost node's
    recovery could give it. A sink kept running takes the records already past the lost
    node (in flight downstream when it died) as newer at once; they are not its recovery's."""
    if recovery.newer_at is None:
        return None
    high = max((index for node, index, at in lines if node == lost and at < failed_at), default=-1)
    return min((at for node, index, at in lines if node == sink and at >= recovery.newer_at and index > high),
               default=None)


def processed_again(lines: list[ProbeLine]) -> dict[int, int]:
    """Node -> records it processed more than once (a record processed three times
    counts twice)."""
    total: dict[int, int] = {}
    distinct: dict[int, set[int]] = {}
    for node, index, _ in lines:
        total[node] = total.get(node, 0) + 1
        distinct.setdefault(node, set()).add(index)
    return {node: total[node] - len(distinct[node]) for node in total}


def relative_error(predicted: float, measured: float) -> float:
    """How far ``measured`` is from ``predicted``, as a share of the prediction."""
    if predicted <= 0:
        raise ValueError(f"a prediction must be > 0 to compare against, got {predicted}")
    return abs(measured - predicted) / predicted


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


@dataclass
class Kill:
    """SIGKILL worker ``worker`` ``after`` seconds after every worker has registered."""

    after: float
    worker: str = "w1"


@dataclass
class Run:
    """What one ``segflow run`` did: its summary line, every JSON log line, and timings."""

    returncode: int | None = None
    seconds: float | None = None        # the job's own run time ("done in"), without start-up
    records: int | None = None          # source records
    wall: float = 0.0
    logs: list[dict] = field(default_factory=list)
    started_at: float | None = None     # wall clock when all workers had registered
    killed_at: float | None = None      # wall clock of the SIGKILL
    kill_missed: str = ""               # why a kill asked for did not happen
    timed_out: bool = False
    tail: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.seconds is not None

    def messages(self, msg: str) -> list[dict]:
        return [e for e in self.logs if e.get("msg") == msg]


def restored_age(run: Run) -> float:
    """Seconds from the cut of the version ``run``'s recovery restored (a global restore:
    the checkpoint it restored; a regional one: the oldest version of a restarted block)
    to the kill. A version is cut when the coordinator starts its round (``checkpoint
    started``); under segment backup a segment's version may be restored before the
    round completed everywhere, so the round's completion is not what dates it."""
    regional = run.messages("regional restore")
    restored = (min(regional[0]["versions"].values()) if regional
                else run.messages("recovering")[0]["restore_checkpoint"])
    started = [e for e in run.messages("checkpoint started") if e["checkpoint"] == restored and e["ts"] < run.killed_at]
    if not started:
        raise RuntimeError(f"the recovery restored version {restored!r}, which no round started before the kill")
    return run.killed_at - started[-1]["ts"]


def segflow_run(job: str, params: dict, parallelism: int = 2, function: str | None = None,
                protocol: str = "none", interval: float = 1.0, state: str | None = None,
                kill: Kill | None = None, timeout: float = 600.0,
                on_hang: Callable[[subprocess.Popen], None] | None = None, job_name: str | None = None,
                extra: tuple[str, ...] = ()) -> Run:
    """Run a job with ``segflow run --processes`` (info logs on), optionally killing a
    worker mid-run; a run that outlives ``timeout`` (e.g. a protocol that deadlocks) is
    interrupted, after ``on_hang(process)`` had a look at it, and reported as timed out.
    ``job_name`` (default: a new one per run) names the job's state in the store, where a
    choice recorded beside it is found; ``extra``: more ``segflow run`` options."""
    args = [SEGFLOW, "run", job, "--parallelism", str(parallelism), "--processes",
            "--job-name", job_name or f"bench-{uuid.uuid4().hex[:10]}", *extra]
    for key, value in params.items():
        args += ["-p", f"{key}={value}"]
    if function:
        args += ["--function", function]
    if protocol != "none":
        args += ["--checkpoint-protocol", protocol, "--checkpoint-interval", str(interval), "--state", state]
    env = dict(os.environ, SEGFLOW_LOG_LEVEL="info")
    run = Run()
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    registered = threading.Event()
    reader = threading.Thread(target=_read_logs, args=(process, run, parallelism, registered), daemon=True)
    reader.start()
    if kill is not None:
        threading.Thread(target=_killer, args=(process, run, kill, registered), daemon=True).start()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        run.timed_out = True
        if on_hang is not None:
            on_hang(process)
        _interrupt(process)
    reader.join(STOP_GRACE)
    run.wall = time.perf_counter() - started
    run.returncode = process.returncode
    return run


def _read_logs(process: subprocess.Popen, run: Run, parallelism: int, registered: threading.Event) -> None:
    """Collect JSON log lines; note when the first attempt's workers have all registered."""
    tail: list[str] = []
    for line in process.stderr:
        if line.startswith("{"):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            run.logs.append(entry)
            if entry.get("msg") == "worker registered" and not registered.is_set() and \
                    sum(e.get("msg") == "worker registered" for e in run.logs) >= parallelism:
                run.started_at = entry["ts"]
                registered.set()
            continue
        match = DONE.search(line)
        if match:
            run.seconds, run.records = float(match.group(1)), int(match.group(2).replace(",", ""))
        tail = (tail + [line])[-40:]
    run.tail = "".join(tail)


def workers_of(process: subprocess.Popen) -> dict[str, psutil.Process]:
    """The job's worker processes by name (``segflow worker --name wN`` descendants)."""
    found = {}
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return found
    for child in children:
        try:
            cmdline = " ".join(child.cmdline()).split()     # a forked worker's is its title
        except psutil.Error:
            continue
        if "worker" in cmdline and "--name" in cmdline:
            found[cmdline[cmdline.index("--name") + 1]] = child
    return found


VICTIM_SEARCH = 2.0      # seconds the killer looks for its victim's process


def _killer(process: subprocess.Popen, run: Run, kill: Kill, registered: threading.Event) -> None:
    """SIGKILL the victim; a process list read while a worker's title is being set (or a
    worker started again) may miss it, so it looks again for ``VICTIM_SEARCH`` seconds,
    and says in ``run.kill_missed`` why it did not kill."""
    if not registered.wait(120):
        run.kill_missed = "the workers had not all registered within 120 s"
        return
    time.sleep(kill.after)
    deadline = time.monotonic() + VICTIM_SEARCH
    while process.poll() is None:
        found = workers_of(process)
        victim = found.get(kill.worker)
        if victim is not None:
            try:
                victim.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                continue
            run.killed_at = time.time()
            return
        if time.monotonic() > deadline:
            run.kill_missed = f"no process of worker {kill.worker} among the run's workers {sorted(found)}"
            return
        time.sleep(0.05)
    run.kill_missed = f"the run ended (exit {process.returncode}) before the kill"


def _interrupt(process: subprocess.Popen) -> None:
    """Stop a run that hangs: Ctrl-C for the CLI (it cancels the job and stops its
    coordinator's process group), then SIGKILL whatever of its tree is left."""
    try:
        tree = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for child in tree:
        try:
            child.kill()
        except psutil.Error:
            pass
