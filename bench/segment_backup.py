"""Benchmark (not a test): the experiment of Shen, Segment Backup (§5.2) on segflow's worker
processes.

A linear topology of seven nodes (bench/jobs/all_pass_chain.py: a generator spout and six
all-pass filter bolts, the last one the sink). Rates are the thesis's (arrival 30 tuples/s
at the spout, service 80 tuples/s at every bolt, a barrier per 25 tuples; Poisson arrivals
and exponential service times, its M/M/1 pipeline) times ``--scale`` (default 10, so a run
is short: 300/s in, 1.25 ms per tuple, a checkpoint interval of 25/300 s; ``--scale 1`` is
the thesis's own). Blocks send every record at once (``--batch-size 1``), as the thesis's
Storm topology sends each tuple: with
batches, a restored spout's backlog goes down the chain as one batch that each bolt finishes
before the next may start, and with segflow's default (1,024 records or 50 ms) every hop
delays a barrier by up to 50 ms; the thesis's M/M/1 model (equations 4.2 and 4.7) knows
neither. ``--batch-size`` and ``--batch-timeout`` (default one inter-arrival time) measure
batching's effect. Configurations:

* ``abs``: the aligned protocol (asynchronous barrier snapshots; restore from the last
  complete global checkpoint; the spout catches up: what its schedule owed while the job
  was down comes at once, as a queue's backlog would);
* ``seg2``: segment backup with only the spout and the sink as connectors (the thesis's
  Flink baseline), ``seg3`` with node 4 too, ``seg4`` with nodes 3 and 5 (spread evenly).

Each round runs the job ``--run`` seconds, SIGKILLs every process (the datacenter is
lost), then starts ``segflow run --restore latest`` as new processes for ``--after``
seconds. Measured per node, from the probe lines the bolts write:

* recovery delay (Definition 1): from the restart command to the first tuple the node
  operates on that is newer than anything it saw before the failure;
* processing time of normal tuples (tuples x measured seconds per tuple) and of barriers
  (the engine's own count, ``barrier_seconds`` in the web view: snapshots, forwarding the
  barrier, a connector's window part), each as a share of the run;
* overhead storage: bytes (and tuples) of each connector's pending window in the store at
  the moment of the failure, the window's mean over the run before it (the coordinator's
  web view sampled every 20 ms: the long-run average that equation 4.7 predicts, and what
  ``model_max_rel_error`` compares), and the snapshots' bytes.

Beside them, the thesis's cost model (chapter 4: segflow.checkpoint.segment_cost) with inputs
measured in the same run: the restart time until the first node runs (t^rr + t^rm) and the edge
delay t^e (each hop's mean time less the M/M/1 sojourn of the node it reaches: for the
recovery delay on the tuples, from the probes, batching included; for the windows on the
barriers, from the blocks' checkpoint start delays in the web view, as a barrier is never
held for a batch), and each connector's ack delay t^a (how much longer the next connector
takes from its barrier to its acknowledgement than this one: the blocks' checkpoint ack
delays less their start delays); the service time is the bolts' mean. The last line is
one JSON object: ``abs_recovery_delay_s``, ``segment_recovery_delay_s`` (per
connector count), ``segment_over_abs`` (four connectors over ABS; the issue's target is
<= 0.5), the model's own ratio with and without the restart (``model_segment_over_abs``,
``model_segment_over_abs_without_restart``: what equation 4.2 allows at these rates) and
``model_max_rel_error`` (recovery delay and window sizes; target <= 0.25; each also apart).
The table's ``versioned`` column and ``model_max_rel_error_versioned`` are 4.7 in the form
that fits segflow's windows (``segment_cost.versioned_pending_window``): a window part is
cut at a barrier version and leaves when the next connector acknowledges that version, so
it waits for its barrier to cross the segment, and a barrier waits at each node only for
the queue ahead of it (M/M/1's W_q), where 4.7 charges a tuple's whole sojourn; its
barrier edge delay is measured against that wait.

Connectors are named here by node (1 the spout, 7 the sink); the job's block ids, which
``--connectors`` takes, count from 0 at the spout, and every round checks that the blocks
the coordinator reports windows for are the ones meant.

``--scenario worker-loss`` (issue 48): the same chain, where segment backup should pay. The
middle node (4) takes five times the others' service time, at a third of the arrival rate
(100 tuples/s at ``--scale 10``, utilisation 0.625 at node 4). The connectors and the barrier
interval are the cost model's: ``segflow plan --segment-backup`` calibrates the job and
records its choice beside the job's state (``--max-recovery-delay``, default 0: the choice
with the least predicted recovery delay; the calibration measures CPU seconds, and these
nodes sleep, so it sees equal nodes), and the run takes it with ``--connectors auto`` (each
round checks the run says so). Each round runs the job once per configuration, both with
one standby worker (``--standby-workers 1``) and one replica per block: ``abs`` (aligned,
global rollback) on one worker, ``segment`` with ``--placement segment`` on one worker per
group; ``--run`` seconds after the workers registered, plus a random share of a checkpoint
interval (``--seed``; the same in both configurations of a round), it SIGKILLs the worker of the first
node of the segment after node 4 (ABS: its only worker), and the job runs on to the end of
its input (``--run + --after`` seconds of it); a run whose killer did not find the victim's
process (the reason is printed) runs again from a clear store, up to three times, and a
run that fails fails the bench. From the probe lines: the recovery delay at
the sink (Definition 1: from the kill to the first tuple the sink processes that is newer
than any it processed before its replicas went back, and than any the lost node had
processed before the kill: a sink kept running would otherwise count the tuples already
past the lost node, in flight when it died, as its recovery's), the records processed again (every
bolt's tuples less its distinct ones; ``reprocessed_work_segment_over_abs`` weighs each
by its node's service time), which nodes went back at all, and the output is
checked exactly once against the oracle (every index once). The model's prediction is
``segment_cost.regional_recovery_delay`` for the nodes that must restart (ABS: all, the
spout catching up; segment backup: the lost segment and what is downstream, fed by the
connector before it, which keeps running and replays its window): every tuple the sink
saw since that connector's cut comes again through the whole restarted chain, after the
first has filled it, at the pace of its slowest node's service plus the send. Measured
inputs: the restart (kill to the first replayed tuple), the tuples' edge delay (each
configuration's own: one process under ABS, one per group under segment backup), the
transmit delay of a replayed tuple (the median hop less the service time), the restored
version's age at the kill (``model_expected_recovery_s`` is the mean over a random
moment, ``segment_cost.restore_lag``, with the checkpoints' measured duration) and the
share of wall time the machine's stalls took before the kill (``stall_share``, from
bench/stall_probe.py, a sleeper of its own: on a shared machine every process freezes
for tens of milliseconds at a time, the replay with them; ``model_without_stalls_s``
leaves it out; ``rounds_stalled_in_recovery_s`` is what the sleeper lost between the kill
and the sink's recovery, where the recovery's own processes compete with it too). The last line:
``worker_loss_recovery_s`` (each), ``worker_loss_segment_over_abs`` (target <= 0.5),
``reprocessed_segment_over_abs`` (target <= 0.3), ``model_max_rel_error`` (target <= 0.25),
``exactly_once``, ``plan_predicted_recovery_s`` (what ``segflow plan --segment-backup`` itself
predicted, with its default restart time and no checkpoint duration);
``configs.segment.nodes_went_back`` shows whether the recovery was regional (the lost node
and those after it; with ``--keep-consumers``, which has the chain declare itself
deterministic, only the nodes of the lost worker); ``segment_mode`` says which it ran.

    .venv/bin/python bench/segment_backup.py [--rounds 5] [--run 6] [--after 5] [--quick]
    .venv/bin/python bench/segment_backup.py --scenario worker-loss [--rounds 5] [--run 6] [--after 6]
        [--keep-consumers]
"""
from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import pickle
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, replace
from typing import Callable

import psutil

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "services"))

from common import (ROOT, SEGFLOW, Kill, NodeRecovery, mean, median, node_recoveries, past_the_lost_node,  # noqa: E402
                    processed_again, relative_error, report, restored_age, segflow_run)

from stall_probe import StallProbe, stall_share  # noqa: E402

from segflow.checkpoint.catalog import Catalog  # noqa: E402
from segflow.checkpoint.segment_cost import (  # noqa: E402
    Delays, Pipeline, pending_window, queue_wait, recovery_delay, regional_recovery_delay, response_time,
    restore_lag, versioned_pending_window)
from segflow.state import open_backend  # noqa: E402

JOB = os.path.join(ROOT, "bench", "jobs", "all_pass_chain.py")
CHAIN_JOB = "all_pass_chain"                                # the job's name, its state's in the store
NODES = 7
ARRIVAL, SERVICE_RATE, BARRIER_EVERY = 30.0, 80.0, 25      # Shen, Segment Backup, §5.2
# --scenario worker-loss: a third of the arrival rate, so that the middle node at five times
# the service time stays stable (utilisation 0.625 at every scale)
WORKER_LOSS_LOAD, DEAR_NODE, DEAR_FACTOR = 1 / 3, 4, 5.0
CONFIGS = {"abs": ("aligned", (1, 7)), "seg2": ("segment", (1, 7)),      # connectors as node numbers
           "seg3": ("segment", (1, 4, 7)), "seg4": ("segment", (1, 3, 5, 7))}


def block_of(node: int) -> int:
    """The job's block ids (as ``segflow plan`` prints them) count from 0 at the spout."""
    return node - 1


def connectors_flag(nodes: tuple[int, ...]) -> str:
    """``--connectors`` for the intermediate connector ``nodes`` (sources and sinks always are)."""
    return ",".join(str(block_of(n)) for n in nodes if n not in (1, NODES)) or "none"


@dataclass(frozen=True)
class Rates:
    """The experiment's rates, the thesis's times ``scale``."""

    scale: float
    batch_size: int             # records a block sends at most in one batch
    batch_timeout: float        # seconds a block holds records for a batch
    load: float = 1.0           # the arrival rate as a share of the thesis's
    dear: int = 0               # the node whose service time is dear_factor times the others' (0: none)
    dear_factor: float = 1.0
    barrier_every: int = BARRIER_EVERY      # tuples per version, its barrier included
    keep_consumers: bool = False            # the chain declares itself deterministic (--keep-consumers)

    @property
    def arrival(self) -> float:
        return ARRIVAL * self.scale * self.load

    @property
    def service(self) -> float:
        """Seconds per tuple at every bolt but the dear one."""
        return 1 / (SERVICE_RATE * self.scale)

    def service_at(self, node: int) -> float:
        """Seconds per tuple at bolt ``node``."""
        return self.service * (self.dear_factor if node == self.dear else 1.0)


def start(rates: Rates, state: str, out: str, probe: str, protocol: str, connectors: str | None, restore: bool):
    args = [SEGFLOW, "run", JOB, "-p", f"output={out}", "-p", f"probe={probe}", "-p", f"rate={rates.arrival}",
            "-p", f"service={rates.service}", "-p", f"batch_size={rates.batch_size}",
            "-p", f"batch_timeout={rates.batch_timeout}",
            "--checkpoint-protocol", protocol,
            "--checkpoint-interval", f"{BARRIER_EVERY / rates.arrival:.4f}", "--state", state, "--quiet"]
    if connectors:
        args += ["--connectors", connectors]
    if restore:
        args += ["--restore", "latest"]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def kill_everything(process: subprocess.Popen) -> None:
    try:
        tree = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    for p in [*tree, psutil.Process(process.pid)] if process.poll() is None else tree:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    process.wait()
    psutil.wait_procs(tree, timeout=10)


WEB_VIEW = re.compile(r"web view at (http://\S+)")


def drain(process: subprocess.Popen) -> None:
    """Reads the rest of the run's stderr, so the pipe never fills (the kill only waits)."""
    threading.Thread(target=process.stderr.read, daemon=True).start()


class WindowSampler:
    """The connectors' pending windows in records, as the coordinator's web view reports
    them (``/api/job``), every ``every`` seconds while the job runs (it drains the run's
    stderr once it has found the address there). Equation 4.7's window is a long-run average
    (Little's law), which one look at the store when the failure comes cannot estimate: a
    stored window is empty between checkpoints and holds whole versions while one waits
    for its acknowledgement."""

    def __init__(self, process: subprocess.Popen, every: float = 0.02):
        self.samples: dict[int, list[int]] = collections.defaultdict(list)
        self.start_delays: dict[int, list[float]] = collections.defaultdict(list)     # block -> seconds
        self.persist: dict[int, list[float]] = collections.defaultdict(list)          # block -> seconds
        self.barrier_seconds: dict[int, float] = {}           # block -> its replicas' time on barriers so far
        self.every = every
        threading.Thread(target=self._run, args=(process,), daemon=True).start()

    def _run(self, process: subprocess.Popen) -> None:
        url = None
        for line in process.stderr:
            found = WEB_VIEW.search(line)
            if found:
                url = found.group(1).rstrip("/") + "/api/job"
                break
        drain(process)
        while url is not None and process.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=1) as reply:
                    job = json.load(reply)
            except (OSError, http.client.HTTPException, ValueError):
                return                                   # the job was killed (mid-reply, perhaps)
            if job.get("phase") == "RUNNING":
                for block in job["blocks"]:
                    if block["window"] is not None:
                        self.samples[block["id"]].append(block["window"]["records"])
                    self.barrier_seconds[block["id"]] = block["barrier_seconds"]
                    start, ack = block["checkpoint_start_delay_ms"], block["checkpoint_ack_delay_ms"]
                    if start is not None:
                        self.start_delays[block["id"]].append(start / 1000)
                    if start is not None and ack is not None:
                        self.persist[block["id"]].append((ack - start) / 1000)
            time.sleep(self.every)

    def means(self) -> dict[int, float]:
        return {block: mean(values) for block, values in self.samples.items() if values}

    def persist_times(self) -> dict[int, float]:
        """Block -> mean seconds from a checkpoint's barrier at the block to its acknowledgement
        at the coordinator (its ack delay less its start delay: alignment, the snapshot's and,
        at a connector, the window part's write, one message)."""
        return {block: mean(values) for block, values in self.persist.items() if values}

    def barrier_hops(self) -> dict[int, float]:
        """Node -> mean seconds a checkpoint's barrier took from the node before it (the
        blocks' start delays, one after the other)."""
        delays = {block: mean(values) for block, values in self.start_delays.items() if values}
        return {n: delays[block_of(n)] - delays[block_of(n - 1)] for n in range(2, NODES + 1)
                if block_of(n) in delays and block_of(n - 1) in delays}


def probe_lines(path: str) -> list[tuple[int, int, float]]:
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                lines.append((int(parts[0]), int(parts[1]), float(parts[2])))
    return lines


def hop_delays(lines: list[tuple[int, int, float]]) -> dict[int, list[float]]:
    """Node -> seconds from the node before it finishing each tuple to this one finishing
    it: the edge delay (batching and the channel) plus the node's sojourn, measured on the
    tuples themselves (the spout writes no probe, so hops start at node 3)."""
    finished: dict[int, dict[int, float]] = collections.defaultdict(dict)
    for node, index, at in lines:
        finished[index][node] = at
    hops: dict[int, list[float]] = collections.defaultdict(list)
    for times in finished.values():
        for node in range(3, NODES + 1):
            if node in times and node - 1 in times:
                hops[node].append(times[node] - times[node - 1])
    return hops


def window_sizes(state: str) -> dict[int, tuple[int, int]]:
    """Connector block -> (bytes, tuples) of its pending window in the store now (the
    parts are sealed: read through the job's catalog)."""
    catalog = Catalog(open_backend(state), "all_pass_chain")
    sizes: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    for (block, replica), versions in catalog.holdings().windows.items():
        for version in versions:
            blob = catalog.read_window(block, replica, version) or b""
            sizes[block][0] += len(blob)
            for elements in pickle.loads(blob).values() if blob else ():
                for element in elements:
                    items = getattr(pickle.loads(element), "items", None)
                    sizes[block][1] += len(items) if isinstance(items, list) else 0
    return {b: (n, t) for b, (n, t) in sizes.items()}


def snapshot_bytes(state: str) -> int:
    backend = open_backend(state)
    return sum(len(backend.get(k) or b"") for k in backend.list("jobs/all_pass_chain/") if "/chk-" in k)


def check_connectors(name: str, nodes: tuple[int, ...], protocol: str, windows: dict[int, float]) -> None:
    """The run's connectors (the blocks the coordinator reports a window for) are the nodes
    this configuration names, so no table row reads another node's window."""
    wanted = {block_of(n) for n in nodes if n != NODES} if protocol == "segment" else set()
    if windows and set(windows) != wanted:
        raise RuntimeError(f"{name}: the job's connectors are blocks {sorted(windows)}, "
                           f"the configuration wants {sorted(wanted)} (nodes {nodes})")


def one_round(rates: Rates, name: str, run_s: float, after_s: float) -> dict:
    protocol, nodes = CONFIGS[name]
    connectors = connectors_flag(nodes) if protocol == "segment" else None
    with tempfile.TemporaryDirectory(prefix="segbench-") as tmp:
        state, out, probe = f"file://{tmp}/state", f"{tmp}/out", f"{tmp}/probe.log"
        first = start(rates, state, out, probe, protocol, connectors, restore=False)
        sampler = WindowSampler(first)
        time.sleep(run_s)
        kill_everything(first)
        before = probe_lines(probe) if os.path.exists(probe) else []
        seen = collections.defaultdict(lambda: -1)
        for node, index, _ in before:
            seen[node] = max(seen[node], index)
        windows, snapshots = window_sizes(state), snapshot_bytes(state)
        check_connectors(name, nodes, protocol, sampler.means())
        restarted_at = time.time()
        second = start(rates, state, out, probe, protocol, connectors, restore=True)
        drain(second)                   # not sampled: polling would load the recovery it measures
        time.sleep(after_s)
        kill_everything(second)
        after = [line for line in probe_lines(probe) if line[2] >= restarted_at]
    first_run = {}
    newer = {}
    for node, index, at in after:
        first_run.setdefault(node, at)
        if index > seen[node] and node not in newer:
            newer[node] = at
    if not newer:
        raise RuntimeError(f"{name}: no node processed a new tuple within {after_s} s of the restart")
    counts = collections.Counter(node for node, _, _ in before)
    return {"delay": {n: newer[n] - restarted_at for n in newer},
            "restart": min(first_run.values()) - restarted_at,
            "replayed": {n: sum(1 for node, i, _ in after if node == n and i <= seen[n]) for n in range(2, NODES + 1)},
            "busy": {n: counts[n] * rates.service / run_s for n in range(2, NODES + 1)},
            "barriers": {n: sampler.barrier_seconds.get(block_of(n), 0.0) / run_s for n in range(1, NODES + 1)},
            "hops": {n: mean(d) for n, d in hop_delays(before).items() if d},
            "barrier_hops": sampler.barrier_hops(), "persist": sampler.persist_times(),
            "windows": windows, "snapshots": snapshots, "mean_windows": sampler.means()}


def pipeline(rates: Rates, connectors: tuple[int, ...]) -> Pipeline:
    return Pipeline(service=tuple([1 / rates.arrival] + [rates.service_at(n) for n in range(2, NODES + 1)]),
                    ratios=(1.0,) * (NODES - 1), connectors=frozenset(connectors), block=rates.barrier_every,
                    rate=rates.arrival, tuple_bytes=40, barrier_bytes=40, checkpoint_bytes=2000, ack_bytes=40)


def edge_delay(rates: Rates, rounds: list[dict], hops: str,
               at_node: Callable[[Pipeline, int], float] = response_time) -> float:
    """t^e measured: a hop's mean time (``hops``: on the tuples, or on the barriers) less the
    model's time at the node it reaches (``at_node``: the M/M/1 sojourn of equation 4.6, or
    a barrier's wait in the queue for the versioned window), averaged over the measured hops."""
    chain = pipeline(rates, (1, NODES))
    measured = mean([hop - at_node(chain, node) for r in rounds for node, hop in r[hops].items()])
    if measured is None:
        raise RuntimeError(f"no {hops.replace('_', ' ')} were measured: give the runs more time (--run)")
    return max(0.0, measured)


def ack_delay(name: str, rounds: list[dict], connector: int) -> float:
    """t^a of ``connector``'s window, measured: a window part enters the pending window when
    its own connector's snapshot is acknowledged and leaves when the next connector's is, so
    beyond the barrier's way between them it waits for how much longer the next connector
    takes from its barrier to its acknowledgement than this one (an intermediate connector
    also writes its own window part; the sink writes none, so that difference can be < 0)."""
    nodes = CONFIGS[name][1]
    here, there = block_of(connector), block_of(min(n for n in nodes if n > connector))
    persist = [r["persist"] for r in rounds if here in r["persist"] and there in r["persist"]]
    if not persist:
        raise RuntimeError(f"{name}: no acknowledgement delays of blocks {here} and {there} were measured: "
                           "give the runs more time (--run)")
    return mean([p[there] - p[here] for p in persist])


def predicted_recovery(rates: Rates, name: str, restart: float, edge: float) -> float:
    """Equation 4.2 with this run's inputs: a recovery replays tuples, so it takes the
    tuples' edge delay. Read per tuple is 0: a replay reads a whole version in one call,
    far below a bolt's 1.25 ms a tuple."""
    return recovery_delay(pipeline(rates, CONFIGS[name][1]), model_delays(rates, edge, restart=restart))


def predicted_windows(rates: Rates, name: str, edge: float, acks: dict[int, float],
                      window: Callable[[Pipeline, Delays, int], float] = pending_window) -> dict[int, float]:
    """Each connector's window by ``window`` (equation 4.7, or its versioned form) with
    this run's inputs: a window part waits for its version's barrier to reach the next
    connector, and a barrier never waits for a batch (it flushes the one being filled and
    goes at once), so it takes the barriers' edge delay ``edge`` (from the blocks'
    checkpoint start delays, one after the other) and each connector's measured ack delay
    ``acks`` (see :func:`ack_delay`). Write per tuple is 0: the store is written once per
    version, off the record path."""
    _, connectors = CONFIGS[name]
    chain = pipeline(rates, connectors)
    return {c: window(chain, model_delays(rates, edge, ack=acks.get(c, 0.0)), c) for c in connectors if c != NODES}


def model_delays(rates: Rates, edge: float, restart: float = 0.0, ack: float = 0.0) -> Delays:
    return Delays(edge=edge, transmit=0.0, read=0.0, write=0.0, normal=rates.service, barrier=0.0, ack=ack,
                  recover_response=restart, recover_misc=0.0)


def chain_params(rates: Rates, out: str, probe: str, events: int) -> dict:
    """The chain job's parameters at ``rates``."""
    return {"output": out, "probe": probe, "events": events, "rate": rates.arrival, "service": rates.service,
            "batch_size": rates.batch_size, "batch_timeout": rates.batch_timeout, "dear": rates.dear,
            "dear_factor": rates.dear_factor, "deterministic": int(rates.keep_consumers)}


def flags(params: dict) -> list[str]:
    return [arg for key, value in params.items() for arg in ("-p", f"{key}={value}")]


def model_choice(rates: Rates, calibrate: float, target: float) -> dict:
    """``segflow plan --segment-backup`` on the chain (in a scratch store): the choice it
    records beside the job's state, where ``segflow run --connectors auto`` reads it."""
    with tempfile.TemporaryDirectory(prefix="segbench-plan-") as tmp:
        state = f"file://{tmp}/state"
        subprocess.run([SEGFLOW, "plan", JOB, "--segment-backup", "--state", state, "--job-name", CHAIN_JOB,
                        "--calibrate", str(calibrate), "--max-recovery-delay", str(target),
                        *flags(chain_params(rates, f"{tmp}/out", f"{tmp}/probe", 10**6))],
                       cwd=ROOT, check=True, stdout=sys.stderr)
        choice = Catalog(open_backend(state), CHAIN_JOB).segment_choice()
    if choice is None:
        raise RuntimeError("segflow plan --segment-backup recorded no choice")
    return choice


def victim_node(connector_nodes: list[int], dear: int) -> int:
    """The first node of the segment after the dear node's: after the first connector at
    or after it (the sink's segment when that connector is the sink: no segment follows)."""
    return min(min(c for c in connector_nodes if c >= dear) + 1, NODES)


def worker_of(rates: Rates, connector_nodes: list[int], node: int) -> tuple[str, int]:
    """The worker that placement by segment gives ``node``, and the workers it needs: one
    per group, which on a chain is one per connector (the spout alone, then each segment's
    bolts with the connector that ends it), so that every block has one replica."""
    workers = len(connector_nodes)
    shown = subprocess.run([SEGFLOW, "plan", JOB, *flags(chain_params(rates, "out", "probe", 1)),
                            "--connectors", connectors_flag(tuple(connector_nodes)), "--placement", "segment",
                            "--parallelism", str(workers)], cwd=ROOT, check=True, capture_output=True, text=True)
    found = re.search(rf"^block {block_of(node)}: 1 replica\(s\) on (w\d+)×1", shown.stdout, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"segflow plan did not place block {block_of(node)} once on one worker:\n{shown.stdout}")
    return found.group(1), workers


NO_RECOVERY = NodeRecovery(None, None)    # a node without probe lines after the failure
KILL_TRIES = 3          # runs of a round whose killer missed its victim, before the round fails


def clear_run(state: str, out: str, probe: str, choice: dict | None) -> None:
    """What a run without its kill left (its state, output and probe lines), so the round's
    next run starts as the first did; ``choice``: the connector choice to record again."""
    catalog = Catalog(open_backend(state), CHAIN_JOB)
    catalog.backend.delete(list(catalog.backend.list("")))
    if choice is not None:
        catalog.write_segment_choice(choice)
    shutil.rmtree(out, ignore_errors=True)
    if os.path.exists(probe):
        os.remove(probe)


def worker_loss_round(rates: Rates, name: str, choice: dict, victim: str, workers: int, run_s: float,
                      after_s: float, lost_node: int, stalls: StallProbe) -> dict:
    """One run of the chain with one standby worker: SIGKILL ``victim`` (which runs
    ``lost_node``) ``run_s`` seconds after the workers registered; the run then goes on to
    its end (its input lasts ``run_s + after_s`` seconds at the rate). Measured from the
    probe lines. The restart is when the first node went back; where none did (a regional
    recovery whose lost node had processed nothing past its restored version), when the
    lost node first processed a record again."""
    events = int(rates.arrival * (run_s + after_s))
    extra = ["--standby-workers", "1"]
    if name == "segment":
        extra += ["--connectors", "auto", "--placement", "segment"]
    with tempfile.TemporaryDirectory(prefix="segbench-") as tmp:
        state, out, probe = f"file://{tmp}/state", f"{tmp}/out", f"{tmp}/probe.log"
        if name == "segment":
            Catalog(open_backend(state), CHAIN_JOB).write_segment_choice(choice)
        for tries in range(1, KILL_TRIES + 1):
            run = segflow_run(JOB, chain_params(rates, out, probe, events), parallelism=workers,
                              protocol="segment" if name == "segment" else "aligned", interval=choice["interval"],
                              state=state, kill=Kill(run_s, victim), timeout=run_s + after_s + 120,
                              job_name=CHAIN_JOB, extra=tuple(extra))
            if not run.ok:
                raise RuntimeError(f"{name}: the run failed (exit {run.returncode}; kill: "
                                   f"{run.kill_missed or 'done'}):\n{run.tail}")
            if run.killed_at is not None:
                break
            print(f"{name}: no kill in run {tries} of {KILL_TRIES} ({run.kill_missed}): the round runs again",
                  file=sys.stderr, flush=True)
            clear_run(state, out, probe, choice if name == "segment" else None)
        else:
            raise RuntimeError(f"{name}: {KILL_TRIES} runs ended without the kill: {run.kill_missed}")
        lines, output = probe_lines(probe), []
        for part in sorted(os.listdir(out)):
            if part.startswith("part-"):
                with open(os.path.join(out, part), encoding="utf-8") as f:
                    output.extend(int(line) for line in f)
    notes = [e.get("note", "") for e in run.messages("protocol")]
    if name == "segment" and not any("the cost model's choice" in note for note in notes):
        raise RuntimeError(f"segment: --connectors auto did not use the recorded choice: {notes}")
    recoveries = node_recoveries(lines, run.killed_at)
    went_back = {n: r.went_back_at for n, r in recoveries.items() if r.went_back_at is not None}
    resumed = min(went_back.values()) if went_back else recoveries.get(lost_node, NO_RECOVERY).newer_at
    recovered_at = past_the_lost_node(lines, NODES, lost_node, run.killed_at, recoveries.get(NODES, NO_RECOVERY))
    if recovered_at is None or resumed is None:
        raise RuntimeError(f"{name}: the lost node or the sink processed nothing after the kill")
    sink_delay = recovered_at - run.killed_at
    stalled = stalls.stalls()
    return {"sink_delay": sink_delay,
            "stall_share": stall_share(stalled, run.started_at, run.killed_at),
            "stalled_in_recovery": sink_delay * stall_share(stalled, run.killed_at, run.killed_at + sink_delay),
            "restart": resumed - run.killed_at, "went_back": sorted(went_back),
            "again": processed_again(lines), "exactly_once": sorted(output) == list(range(events)),
            "hops": {n: mean(d) for n, d in hop_delays([x for x in lines if x[2] < run.killed_at]).items() if d},
            "transmit": transmit_delay(rates, hop_delays([x for x in lines if x[2] < run.killed_at])),
            "checkpoint": mean([e["seconds"] for e in run.messages("checkpoint complete") if e["ts"] < run.killed_at]),
            "restored_age": restored_age(run),
            "notes": notes}


def transmit_delay(rates: Rates, hops: dict[int, list[float]]) -> float | None:
    """t^tr measured: the median of every hop's time less the receiving node's service
    time. At one record a batch and a low load, most tuples find no queue, so this is what
    passing one tuple on costs (the channel, and in one process the other blocks' turns);
    the median, as a burst of the machine's other load lengthens a few hops by tens of
    milliseconds (the mean, the edge delay, with them) but not a replay's steady pace."""
    return median([hop - rates.service_at(node) for node, times in hops.items() for hop in times])


def predicted_worker_loss(rates: Rates, boundary: int, connector_nodes: list[int], restart: float,
                          edge: float, transmit: float, age: float, stall: float) -> float:
    """``segment_cost.regional_recovery_delay``: the nodes after ``boundary`` restart
    (under ABS every bolt, the spout catching up; under segment backup the lost segment
    and what is downstream of it, fed by connector ``boundary``, which keeps running and
    replays its window), and every tuple the sink saw since the connector's cut comes
    again through the whole restarted chain, at its slowest node's service plus the send.
    Measured inputs: the restart (kill to the first replayed tuple), the tuples' edge delay
    (the chain's fill), the transmit delay ``t^tr`` (:func:`transmit_delay`: a replay
    sends its tuples one at a time, each after processing it: ``serial_send``), the
    restored version's ``age`` at the kill (each round's; the mean over a random moment
    is ``segment_cost.restore_lag``) and the share of wall time the machine's stalls took
    before the kill (``stall``, :mod:`stall_probe`)."""
    return regional_recovery_delay(pipeline(rates, tuple(connector_nodes)), Delays(
        edge=edge, transmit=max(0.0, transmit), read=0.0, write=0.0, normal=rates.service, barrier=0.0, ack=0.0,
        recover_response=restart, recover_misc=0.0, restored_age=age, serial_send=True, stall_share=stall), boundary)


def worker_loss(rates: Rates, args: argparse.Namespace) -> None:
    """``--scenario worker-loss`` (see the module's doc)."""
    choice = model_choice(rates, args.calibrate, args.max_recovery_delay)
    rates = replace(rates, barrier_every=round(rates.arrival * choice["interval"]) + 1)
    connector_nodes = sorted(int(b) + 1 for b in choice["connectors"])
    victim = victim_node(connector_nodes, rates.dear)
    segment_worker, segment_workers = worker_of(rates, connector_nodes, victim)
    boundary = max(c for c in connector_nodes if c < victim)
    setups = {"abs": ("w0", 1, 1, [1, NODES]), "segment": (segment_worker, segment_workers, boundary, connector_nodes)}
    print(f"the cost model chose connectors at nodes {connector_nodes}, a barrier every {choice['interval']} s; "
          f"SIGKILL of the worker of node {victim} (segment backup: {segment_worker} of {segment_workers})",
          file=sys.stderr, flush=True)
    results: dict[str, list[dict]] = {name: [] for name in setups}
    moments = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="segbench-stalls-") as tmp:
        stalls = StallProbe(os.path.join(tmp, "stalls"))
        try:
            for r in range(args.rounds):
                # the kill lands at a random moment of the checkpoint cycle (the same in both
                # configurations of a round): at a fixed time after the start it fell in the same
                # phase every round, and that phase decided how old the restored versions were
                kill_at = args.run + moments.uniform(0.0, choice["interval"])
                for name, (worker, workers, _, _) in setups.items():     # interleaved: machine drift hits both
                    print(f"round {r + 1}/{args.rounds} {name} (kill at {kill_at:.3f} s) ...", file=sys.stderr,
                          flush=True)
                    results[name].append(worker_loss_round(rates, name, choice, worker, workers, kill_at,
                                                           args.after, victim, stalls))
        finally:
            stalls.stop()
    summary = {}
    for name, rounds in results.items():
        _, _, first, connectors = setups[name]
        restart, delay = mean([r["restart"] for r in rounds]), mean([r["sink_delay"] for r in rounds])
        edge, checkpoint = edge_delay(rates, rounds, "hops"), mean([r["checkpoint"] for r in rounds])
        transmit = mean([r["transmit"] for r in rounds])
        if transmit is None:
            raise RuntimeError(f"{name}: no hops were measured before the kills: give the runs more time (--run)")
        models = [predicted_worker_loss(rates, first, connectors, r["restart"], edge, transmit, r["restored_age"],
                                        r["stall_share"]) for r in rounds]
        model = mean(models)
        without_stalls = mean([predicted_worker_loss(rates, first, connectors, r["restart"], edge, transmit,
                                                     r["restored_age"], 0.0) for r in rounds])
        stall = mean([r["stall_share"] for r in rounds])
        summary[name] = {"recovery_s": round(delay, 3), "edge_delay_ms": round(1000 * edge, 2),
                         "transmit_delay_ms": round(1000 * transmit, 2),
                         "checkpoint_s": round(checkpoint, 3),
                         "restored_age_s": round(mean([r["restored_age"] for r in rounds]), 3),
                         "stall_share": round(stall, 4),
                         "model_expected_recovery_s": round(predicted_worker_loss(
                             rates, first, connectors, restart, edge, transmit,
                             restore_lag(choice["interval"], checkpoint), stall), 3),
                         "rounds_recovery_s": [round(r["sink_delay"], 3) for r in rounds],
                         "rounds_reprocessed": [sum(r["again"].values()) for r in rounds],
                         "rounds_model_s": [round(m, 3) for m in models],
                         "rounds_restart_s": [round(r["restart"], 3) for r in rounds],
                         "rounds_restored_age_s": [round(r["restored_age"], 3) for r in rounds],
                         "rounds_stall_share": [round(r["stall_share"], 4) for r in rounds],
                         "rounds_stalled_in_recovery_s": [round(r["stalled_in_recovery"], 3) for r in rounds],
                         "model_recovery_s": round(model, 3),
                         "model_rel_error": round(relative_error(model, delay), 3), "restart_s": round(restart, 3),
                         "model_without_stalls_s": round(without_stalls, 3),
                         "model_rel_error_without_stalls": round(relative_error(without_stalls, delay), 3),
                         "reprocessed": mean([sum(r["again"].values()) for r in rounds]),
                         "reprocessed_work_s": mean([sum(n * rates.service_at(node) for node, n in r["again"].items())
                                                     for r in rounds]),
                         "nodes_went_back": sorted({n for r in rounds for n in r["went_back"]}),
                         "exactly_once_rounds": sum(r["exactly_once"] for r in rounds)}
        print(f"{name:8} recovery at the sink {delay:.3f} s (model {model:.3f} s), restart {restart:.3f} s, "
              f"{summary[name]['reprocessed']:.0f} records processed again, nodes that went back "
              f"{summary[name]['nodes_went_back']}", file=sys.stderr)
    report("segment_backup", {
        "scenario": "worker-loss", "rounds": args.rounds,
        "segment_mode": "kept consumers (the chain declared deterministic)" if rates.keep_consumers
        else "a restarted block's consumers restart", "rate": rates.arrival, "service_per_s": 1 / rates.service,
        "dear_node": rates.dear, "dear_factor": rates.dear_factor, "batch_size": rates.batch_size,
        "connectors": connector_nodes, "interval_s": choice["interval"], "killed_node": victim,
        "connectors_chosen_by": results["segment"][0]["notes"],
        "plan_predicted_recovery_s": round(choice["predicted_recovery_delay_s"], 3),
        "worker_loss_recovery_s": {name: s["recovery_s"] for name, s in summary.items()},
        "worker_loss_segment_over_abs": round(summary["segment"]["recovery_s"] / summary["abs"]["recovery_s"], 3),
        "reprocessed_segment_over_abs": round(summary["segment"]["reprocessed"] / summary["abs"]["reprocessed"], 3),
        "reprocessed_work_segment_over_abs": round(summary["segment"]["reprocessed_work_s"]
                                                   / summary["abs"]["reprocessed_work_s"], 3),
        "model_max_rel_error": max(s["model_rel_error"] for s in summary.values()),
        "model_max_rel_error_without_stalls": max(s["model_rel_error_without_stalls"] for s in summary.values()),
        "exactly_once": all(r["exactly_once"] for rounds in results.values() for r in rounds),
        "configs": summary})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=["thesis", "worker-loss"], default="thesis",
                        help="thesis (default): §5.2's whole-job loss; worker-loss: one worker SIGKILLed, ABS and "
                             "segment backup with one standby worker each")
    parser.add_argument("--max-recovery-delay", type=float, default=0.0, metavar="S",
                        help="worker-loss: the target segflow plan --segment-backup chooses for (default 0: the "
                             "choice with the least predicted recovery delay)")
    parser.add_argument("--calibrate", type=float, default=3.0, metavar="S",
                        help="worker-loss: seconds of segflow plan --segment-backup's calibration run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="worker-loss: the kill moments' random seed")
    parser.add_argument("--run", type=float, default=6.0, help="seconds before the disaster")
    parser.add_argument("--after", type=float, default=6.0, help="seconds observed after the restart")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 4 + 5 s (a smoke run)")
    parser.add_argument("--batch-size", type=int, default=1, metavar="N",
                        help="records a block sends at most in one batch (default 1: the thesis's tuple-at-a-time "
                             "Storm topology; segflow's own default is 1024)")
    parser.add_argument("--batch-timeout", type=float, default=None, metavar="S",
                        help="how long a block holds records for a batch when --batch-size > 1 (default: one "
                             "inter-arrival time; segflow's own default is 0.05)")
    parser.add_argument("--keep-consumers", action="store_true",
                        help="worker-loss: the chain declares itself deterministic, so a regional recovery keeps "
                             "the consumers of the restarted node running (default: they restart with it)")
    parser.add_argument("--scale", type=float, default=10.0,
                        help="the thesis's rates times this (1: its own 30 tuples/s in, 80/s service)")
    args = parser.parse_args()
    if args.scale <= 0:
        parser.error(f"--scale must be > 0, got {args.scale}")
    if args.batch_timeout is not None and args.batch_timeout <= 0:
        parser.error(f"--batch-timeout must be > 0, got {args.batch_timeout}")
    if args.batch_size < 1:
        parser.error(f"--batch-size must be >= 1, got {args.batch_size}")
    worker_loss_scenario = args.scenario == "worker-loss"
    load = WORKER_LOSS_LOAD if worker_loss_scenario else 1.0
    timeout = args.batch_timeout if args.batch_timeout is not None else 1 / (ARRIVAL * args.scale * load)
    rates = Rates(args.scale, args.batch_size, timeout, keep_consumers=args.keep_consumers)
    if args.quick:
        args.rounds, args.run, args.after = 2, 4.0, 5.0
    if worker_loss_scenario:
        worker_loss(replace(rates, load=load, dear=DEAR_NODE, dear_factor=DEAR_FACTOR), args)
        return
    results: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    for r in range(args.rounds):
        for name in CONFIGS:                       # interleaved: machine drift hits every configuration
            print(f"round {r + 1}/{args.rounds} {name} ...", file=sys.stderr, flush=True)
            results[name].append(one_round(rates, name, args.run, args.after))
    summary, window_errors, versioned_errors, delay_errors = {}, [], [], []
    print(f"{'config':6} {'node':>4} {'recovery s':>10} {'model s':>8} {'replayed':>8} {'busy %':>7} {'barrier %':>9} "
          f"{'window KiB':>10} {'window tuples':>13} {'mean tuples':>11} {'model tuples':>12} {'versioned':>9}")
    every_round = [r for rounds in results.values() for r in rounds]
    edge, barrier_edge = edge_delay(rates, every_round, "hops"), edge_delay(rates, every_round, "barrier_hops")
    queued_edge = edge_delay(rates, every_round, "barrier_hops", queue_wait)
    acks: dict[str, dict[int, float]] = {}
    for name, rounds in results.items():
        restart = mean([r["restart"] for r in rounds])
        segment = CONFIGS[name][0] == "segment"
        acks[name] = {c: ack_delay(name, rounds, c) for c in CONFIGS[name][1] if c != NODES} if segment else {}
        model_delay = predicted_recovery(rates, name, restart, edge)
        model_windows, versioned_windows = {}, {}  # ABS keeps no pending windows to compare
        if segment:
            model_windows = predicted_windows(rates, name, barrier_edge, acks[name])
            versioned_windows = predicted_windows(rates, name, queued_edge, acks[name], versioned_pending_window)
        per_node = {n: mean([r["delay"].get(n, float("nan")) for r in rounds]) for n in range(2, NODES + 1)}
        barrier_percent = {n: 100 * mean([r["barriers"][n] for r in rounds]) for n in range(1, NODES + 1)}
        for n in range(1, NODES + 1):
            block = block_of(n)
            kib = mean([r["windows"].get(block, (0, 0))[0] for r in rounds]) / 1024
            tuples = mean([r["windows"].get(block, (0, 0))[1] for r in rounds])
            sampled = mean([r["mean_windows"].get(block, 0.0) for r in rounds])
            model, versioned = model_windows.get(n), versioned_windows.get(n)
            delay = f"{per_node[n]:.2f}" if n in per_node else "spout"
            replayed = f"{mean([r['replayed'][n] for r in rounds]):.0f}" if n in per_node else ""
            busy = f"{100 * mean([r['busy'][n] for r in rounds]):.1f}" if n in per_node else ""
            print(f"{name:6} {n:>4} {delay:>10} {'' if n != NODES else f'{model_delay:.2f}':>8} {replayed:>8} "
                  f"{busy:>7} {barrier_percent[n]:>9.2f} {kib:>10.1f} {tuples:>13.0f} {sampled:>11.1f} "
                  f"{'' if model is None else f'{model:.1f}':>12}"
                  f" {'' if versioned is None else f'{versioned:.1f}':>9}")
            if model is not None and model > 0:
                window_errors.append(abs(sampled - model) / model)
            if versioned is not None and versioned > 0:
                versioned_errors.append(abs(sampled - versioned) / versioned)
        spout_window = mean([r["mean_windows"].get(block_of(1), 0.0) for r in rounds])
        total = max(per_node.values())
        delay_errors.append(abs(total - model_delay) / model_delay)
        summary[name] = {"recovery_delay_s": round(total, 3), "restart_s": round(restart, 3),
                         "model_recovery_delay_s": round(model_delay, 3),
                         "snapshot_kib": round(mean([r["snapshots"] for r in rounds]) / 1024, 1),
                         "spout_window_tuples": round(spout_window, 1),
                         "barrier_percent": {str(n): round(share, 3) for n, share in barrier_percent.items()}}
        print(f"{name:6} total recovery {total:.2f} s (restart until the first node runs {restart:.2f} s); "
              f"snapshots {summary[name]['snapshot_kib']} KiB", file=sys.stderr)
    abs_delay = summary["abs"]["recovery_delay_s"]
    report("segment_backup", {
        "rounds": args.rounds, "scale": args.scale, "rate": rates.arrival, "service_per_s": 1 / rates.service,
        "batch_size": rates.batch_size, "batch_timeout_s": round(rates.batch_timeout, 5),
        "barrier_every": BARRIER_EVERY,
        "abs_recovery_delay_s": abs_delay,
        "segment_recovery_delay_s": {str(len(CONFIGS[n][1])): summary[n]["recovery_delay_s"]
                                     for n in ("seg2", "seg3", "seg4")},
        "segment_over_abs": round(summary["seg4"]["recovery_delay_s"] / abs_delay, 3),
        "model_max_rel_error": round(max(window_errors + delay_errors), 3),
        "model_max_rel_error_recovery_delay": round(max(delay_errors), 3),
        "model_max_rel_error_window": round(max(window_errors), 3),
        "model_max_rel_error_versioned": round(max(versioned_errors + delay_errors), 3),
        "model_max_rel_error_window_versioned": round(max(versioned_errors), 3),
        "model_segment_over_abs": round(summary["seg4"]["model_recovery_delay_s"]
                                        / summary["abs"]["model_recovery_delay_s"], 3),
        "model_segment_over_abs_without_restart": round(predicted_recovery(rates, "seg4", 0.0, edge)
                                                        / predicted_recovery(rates, "abs", 0.0, edge), 3),
        "edge_delay_ms": {"tuples": round(1000 * edge, 2), "barriers": round(1000 * barrier_edge, 2),
                          "barriers_versioned": round(1000 * queued_edge, 2)},
        "ack_delay_ms": {name: {str(c): round(1000 * a, 2) for c, a in by_node.items()}
                         for name, by_node in acks.items() if by_node},
        "configs": summary})


if __name__ == "__main__":
    main()
