"""Benchmark (not a test): what the checkpointing protocols cost (Carbone et al.,
Lightweight Asynchronous Snapshots, and Wiemers, Benchmarking Checkpointing; see
docs/architecture/papers.md).

Part 1, Wiemers's comparison. Nexmark q1 (map), q3 (join person-auction), q8 (event-time
tumbling window join), q12 (bids per bidder in processing-time windows) and the cyclic
3-hop query (an ``iterate`` loop with a feedback edge), jobs in bench/jobs/checkpoint_queries.py,
run for every protocol (none, aligned, unaligned, uncoordinated, cic) at parallelism 2 with
a fixed checkpoint interval, without and with one failure (SIGKILL of worker w1 halfway
through a paced run). The interval is segflow's: coordinated rounds start that long after
the previous one ended; uncoordinated/cic replicas checkpoint on their own timers, jittered
to 0.5-1.5 times the interval.

Part 2, Carbone et al.'s ABS overhead curve: wordcount's run time (and workers' CPU time) for
``aligned`` at several checkpoint intervals, and with only the final checkpoint, against
``none``.

Why each metric is measured the way it is:

* throughput: records/s of the job's own run time (no process start-up) on a fixed input,
  source unthrottled: the capacity of the pipeline. Median over ``--repeats`` interleaved
  rounds (every round runs every protocol, so drift in the machine's load hits all alike).
  ``overhead`` is the throughput loss against ``none``; ``cpu+`` the extra CPU time the
  workers spent (from the probe), which other users' load disturbs far less than wall time.
* latency p50/p99: in a second, paced run whose source is capped at ``--load`` times the
  ``none`` throughput of that query (the same rate for every protocol, as in the thesis).
  Every record carries its creation time; the sink writes ``now - creation`` of the newest
  input of each result. Unthrottled runs would only measure queueing. Checkpoint and network
  figures come from this paced run too, so every protocol moved the same data at the same
  rate.
* checkpoint time: coordinated protocols, the coordinator's "checkpoint complete" log (trigger
  until every replica's snapshot is stored, so alignment included); uncoordinated/cic, per
  local checkpoint from its start on the replica's thread until stored and reported to the
  coordinator (bench/jobs/ckpt_probe.py), since the engine does not log those.
* network: bytes of frames between the two workers (the probe wraps the data plane's
  encoder). Protocol bytes are barrier frames plus piggybacked protocol data (HMNR with cic);
  ``proto%`` is their share. Channel logs of uncoordinated/cic go to the state store, not the
  network: reported apart as ``log_bytes``, as are the reports to the coordinator.
* useless checkpoints (uncoordinated/cic, no failure): local checkpoints on no consistent
  recovery line (on a Z-cycle), recomputed from the counters each checkpoint reported, with
  segflow's own recovery-line code. With a failure: the checkpoints the coordinator rolled
  back (the thesis's "rollback distance"), from its "recovery line" log.
* recovery time: from the SIGKILL until every worker of the new attempt has restored its
  state (or, with nothing to restore, has registered); ``detect`` is until the coordinator
  logs "recovering". ``lost`` is how much longer the paced run took than without a failure.
* exactly-once: every result carries a weight whose total is fixed by the input; a run whose
  committed output totals differently from ``none`` is flagged.
* hangs: a run that outlives 6x its expected time is stopped and reported as an error, with
  its workers' thread stacks kept in a directory named in the error.

Prints progress and tables on stderr and one JSON line per configuration on stdout; the
LAST line is a JSON summary with ``aligned_1s_overhead`` (fractional throughput loss of
``aligned`` at a 1 s interval against ``none``, wordcount at parallelism 2, median of
interleaved paired rounds). The machine may be shared: read numbers with their spread
(``seconds_each`` in the JSON lines). Each ``segflow run`` also spends 1-3.5 s starting its
coordinator and workers, outside the measured job time but inside the bench's duration.

    .venv/bin/python bench/checkpointing.py --quick        # 3 min idle, 4-5 min on a busy 2-core box
    .venv/bin/python bench/checkpointing.py                # 20 min idle, 25-30 on a busy 2-core box
    .venv/bin/python bench/checkpointing.py --queries q3,cyclic --protocols aligned,cic --repeats 3
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields, replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ROOT, Kill, mean, median, percentile, report, segflow_run, workers_of  # noqa: E402
from segflow.checkpoint.protocols import CheckpointProtocol  # noqa: E402
from segflow.checkpoint.recovery_line import CheckpointRecord, recovery_line  # noqa: E402
from segflow.datagen.corpus import corpus_path  # noqa: E402
from segflow.runtime.elements import FINAL_CHECKPOINT  # noqa: E402

JOBS = os.path.join(ROOT, "bench", "jobs", "checkpoint_queries.py")
WORDCOUNT = os.path.join(ROOT, "bench", "jobs", "wordcount_probed.py")     # examples/wordcount.py
QUERIES = ("q1", "q3", "q8", "q12", "cyclic")
PROTOCOLS = ("none",) + tuple(p.value for p in CheckpointProtocol                  # Wiemers's four
                             if p not in (CheckpointProtocol.NONE, CheckpointProtocol.SEGMENT))
COORDINATED = ("aligned", "unaligned")
NEVER = 86400.0      # an ABS-curve interval longer than any run: no periodic checkpoint
RESTORED = ("restored", "restored recovery line", "restored with rescaling")    # worker log messages
LOCAL = ("uncoordinated", "cic")
# input sizes at --scale 1: each runs about 3-5 s unthrottled on an idle 2-core machine
EVENTS = {"q1": 900_000, "q3": 1_000_000, "q8": 120_000, "q12": 300_000, "cyclic": 60_000}


def _option(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Settings:
    """What a run measures; each field is also an option (``--paced-seconds``) over the
    mode's value."""
    scale: float = _option(1.0, "input size factor (1 = about 3-5 s unthrottled per run)")
    repeats: int = _option(2, "interleaved unthrottled rounds per query")
    interval: float = _option(1.0, "checkpoint interval of the query runs, seconds")
    paced_seconds: float = _option(5.0, "length of a paced (latency / failure) run")
    load: float = _option(0.5, "paced rate as a fraction of the unthrottled none throughput")
    kill_fraction: float = _option(0.5, "when in a paced run the worker is killed, as a fraction of its length")
    # about 8 s a run at p2: start-up and the last checkpoint matter less
    wordcount_mb: float = _option(250.0, "corpus size of the ABS curve")
    curve_intervals: tuple = _option((0.25, 0.5, 1.0, 2.0, 4.0),
                                     "comma-separated intervals of the ABS curve (1 is always in)")
    curve_repeats: int = _option(5, "interleaved rounds of the ABS curve")


DEFAULT = Settings()
QUICK = Settings(scale=0.1, repeats=1, interval=0.3, paced_seconds=1.0, wordcount_mb=25.0,
                 curve_intervals=(0.5, 1.0), curve_repeats=2)


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ one query run
def run_query(query: str, protocol: str, events: int, interval: float, rate: float | None = None,
              kill: Kill | None = None, expected: float = 10.0) -> dict:
    """One run of ``query``: its throughput, latency, checkpoint, network and (with
    ``kill``) recovery figures."""
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as scratch:
        params = {"output": f"{scratch}/out", "events": events, "probe": f"{scratch}/probe"}
        if rate:
            params["rate"] = f"{rate:.0f}"
        hang = os.path.join(tempfile.gettempdir(), f"segflow-bench-hang-{query}-{protocol}-{os.getpid()}")
        run = segflow_run(JOBS, params, function=query, protocol=protocol, interval=interval,
                          state=f"file://{scratch}/state", kill=kill, timeout=max(30.0, 6 * expected),
                          on_hang=lambda process: keep_stacks(process, f"{scratch}/probe", hang))
        result = {"ok": run.ok, "seconds": run.seconds, "records": run.records, "wall_seconds": round(run.wall, 2),
                  "recoveries": len(run.messages("recovering"))}   # without a kill: a spurious one
        if not run.ok:
            result["error"] = f"timed out (hung; worker stacks in {hang})" if run.timed_out else \
                (run.tail.strip().splitlines() or ["?"])[-1]
            return result
        probe = read_probe(f"{scratch}/probe")
        result["cpu_s"] = probe["cpu_s"]
        result.update(output_stats(f"{scratch}/out"))
        result.update(checkpoint_stats(run, protocol, probe))
        result.update(network_stats(probe))
        if kill is not None:
            result.update(recovery_stats(run))
        elif protocol in LOCAL and probe["patched_checkpoints"]:
            result["useless_checkpoints"] = useless_checkpoints(probe["checkpoints"])
    return result


def keep_stacks(process, probe: str, keep: str) -> None:
    """A run hangs: have its workers dump their threads' stacks (the probe's SIGUSR1
    handler; only workers that installed it, SIGUSR1 would end the others) and keep the
    dumps, so the report can say where it hangs."""
    for worker in workers_of(process).values():
        if os.path.exists(os.path.join(probe, f"{worker.pid}.stacks")):
            worker.send_signal(signal.SIGUSR1)
    time.sleep(1.0)
    os.makedirs(keep, exist_ok=True)
    for path in glob.glob(os.path.join(probe, "*.stacks")):
        shutil.copy(path, keep)


def read_probe(directory: str) -> dict:
    """The probe files of every worker process of the run (killed ones included)."""
    frames: dict[str, list[int]] = {}
    meta, checkpoints, patched, cpu = 0, [], set(), 0.0
    for path in glob.glob(os.path.join(directory, "*.json")):
        with open(path) as f:
            data = json.load(f)
        for kind, (count, size) in data["frames"].items():
            entry = frames.setdefault(kind, [0, 0])
            entry[0] += count
            entry[1] += size
        meta += data["meta_bytes"]
        checkpoints.extend(data["checkpoints"])
        patched.update(data["patched"])
        cpu += data.get("cpu_s", 0.0)
    return {"frames": frames, "meta_bytes": meta, "checkpoints": checkpoints, "cpu_s": round(cpu, 3),
            "patched_frames": "frames" in patched, "patched_checkpoints": "local_checkpoints" in patched}


def output_stats(directory: str) -> dict:
    """Latency percentiles and total weight of the committed output (part files only:
    pending epochs of a transactional sink are not output)."""
    latencies, weight = [], 0
    for path in glob.glob(os.path.join(directory, "part-*")):
        with open(path) as f:
            for line in f:
                fields = line.split("\t", 2)
                latencies.append(float(fields[0]))
                weight += int(fields[1])
    latencies.sort()
    return {"latency_p50_ms": _round(percentile(latencies, 50), 1),
            "latency_p99_ms": _round(percentile(latencies, 99), 1),
            "latency_samples": len(latencies), "output_weight": weight}


def checkpoint_stats(run, protocol: str, probe: dict) -> dict:
    if protocol in COORDINATED:
        rounds = [e for e in run.messages("checkpoint complete") if e["id"] < FINAL_CHECKPOINT]
        return {"checkpoints": len(rounds),
                "avg_checkpoint_s": _round(mean(e["seconds"] for e in rounds), 4),
                "avg_alignment_s": _round(mean(e["alignment_seconds"] for e in rounds), 4),
                "avg_checkpoint_bytes": _round(mean(e["bytes"] for e in rounds)),
                "stored_bytes": sum(e["bytes"] for e in rounds)}
    if protocol in LOCAL:
        if not probe["patched_checkpoints"]:
            return {"checkpoints": None, "note": "local checkpoints not measurable (probe could not patch)"}
        local = probe["checkpoints"]
        return {"checkpoints": len(local),
                "forced_checkpoints": sum(c["forced"] for c in local),
                "avg_checkpoint_s": _round(mean(c["total_s"] for c in local), 4),
                "avg_checkpoint_sync_s": _round(mean(c["sync_s"] for c in local), 4),
                "avg_checkpoint_bytes": _round(mean(c["state_bytes"] for c in local)),
                "stored_bytes": sum(c["state_bytes"] + c["log_bytes"] for c in local),
                "log_bytes": sum(c["log_bytes"] for c in local),
                "report_bytes": sum(c["report_bytes"] for c in local)}
    return {"checkpoints": 0}


def network_stats(probe: dict) -> dict:
    if not probe["patched_frames"]:
        return {}
    frames = probe["frames"]
    total = sum(size for _, size in frames.values())
    protocol = frames.get("barrier", [0, 0])[1] + probe["meta_bytes"]
    return {"net_bytes": total, "protocol_bytes": protocol,
            "protocol_overhead": _round(protocol / total, 5) if total else None,
            "barrier_frames": frames.get("barrier", [0, 0])[0]}


def recovery_stats(run) -> dict:
    killed = run.killed_at
    if killed is None:
        return {"recovery_s": None, "note": "the job ended before the kill"}
    recovering = [e for e in run.messages("recovering") if e["ts"] >= killed - 0.5]
    attempt = recovering[0]["attempt"] if recovering else 1
    restored = [e for e in run.logs if e.get("msg") in RESTORED and e["ts"] >= killed
                and e.get("attempt", attempt) == attempt]
    back = restored or [e for e in run.messages("worker registered") if e.get("attempt") == attempt]
    line = run.messages("recovery line")
    after = [e for e in run.messages("checkpoint complete") if e.get("attempt", 0) >= attempt
             and e["id"] < FINAL_CHECKPOINT]
    if line:                    # uncoordinated protocols: the line every replica restarts from
        restored = line[0].get("line")
    else:                       # coordinated: the checkpoint id, or "none (from the start)"
        restored = recovering[0].get("restore_checkpoint") if recovering else None
    return {"detect_s": _round(max(0.0, recovering[0]["ts"] - killed), 3) if recovering else None,
            "recovery_s": _round(max(e["ts"] for e in back) - killed, 3) if back else None,
            "first_checkpoint_after_s": _round(after[0]["ts"] - killed, 3) if after else None,
            "restored": restored, "rolled_back": line[0].get("useless") if line else None}


def useless_checkpoints(checkpoints: list[dict]) -> int | None:
    """Local checkpoints that belong to no consistent global checkpoint (Netzer-Xu: they
    lie on a Z-cycle). Checkpoint C of process p is on one iff the maximum consistent line
    below {C, the latest of every other process} still contains C."""
    records: dict = {}
    for c in checkpoints:
        records.setdefault(c["process"], {})[c["index"]] = CheckpointRecord(
            c["process"], c["index"], {(a, b): n for a, b, n in c["sent"]},
            {(a, b): n for a, b, n in c["processed"]})
    processes = set(records) | {x for c in checkpoints for a, b, _ in c["sent"] + c["processed"] for x in (a, b)}
    history = [CheckpointRecord(p, 0) for p in processes] + [r for slot in records.values() for r in slot.values()]
    useless = 0
    try:
        for process, slot in records.items():
            for index in slot:
                cut = [r for r in history if r.process != process or r.index <= index]
                if recovery_line(cut, set()).line[process] != index:
                    useless += 1
    except ValueError:          # a gap in the records (a checkpoint not reported)
        return None
    return useless


# ---------------------------------------------------------------- the query matrix
def query_matrix(settings: Settings, queries: list[str], protocols: list[str]) -> list[dict]:
    """Every query's rows; each query's JSON lines are printed as soon as it is done."""
    rows = []
    for query in queries:
        done = query_rows(settings, query, protocols)
        for row in done:
            print(json.dumps(row), flush=True)
        rows.extend(done)
    return rows


def query_rows(settings: Settings, query: str, protocols: list[str]) -> list[dict]:
    """All configurations of one query: unthrottled rounds, then paced runs without and with
    a failure; one row per (protocol, failure)."""
    events = max(1000, int(EVENTS[query] * settings.scale))
    base = {"kind": "query", "query": query, "interval": settings.interval, "parallelism": 2}
    unthrottled: dict[str, list[dict]] = {p: [] for p in protocols}
    for round_ in range(settings.repeats):
        for protocol in protocols:
            result = run_query(query, protocol, events, settings.interval)
            unthrottled[protocol].append(result)
            _progress(query, protocol, f"unthrottled {round_ + 1}/{settings.repeats}", result)
    none_seconds = median(r["seconds"] for r in unthrottled["none"] if r["ok"])
    if none_seconds is None:    # no baseline: neither a rate for the paced runs nor overheads
        return [dict(base, protocol=p, failure=False, error="the none runs failed") for p in protocols]
    rate = settings.load * events / none_seconds
    paced_events = max(500, int(rate * settings.paced_seconds))
    rows = []
    for protocol in protocols:
        paced = run_query(query, protocol, paced_events, settings.interval, rate, expected=settings.paced_seconds)
        _progress(query, protocol, "paced", paced)
        rows.append(_row(base, protocol, events, unthrottled[protocol], paced, rate, paced_events))
    for protocol in protocols:
        if protocol == "none":
            continue            # nothing to recover from: the job fails
        kill = Kill(after=settings.kill_fraction * settings.paced_seconds)
        failed = run_query(query, protocol, paced_events, settings.interval, rate, kill,
                           expected=settings.paced_seconds)
        _progress(query, protocol, "paced + kill", failed)
        no_failure = next(r for r in rows if r["protocol"] == protocol)
        rows.append(_failure_row(base, protocol, failed, no_failure, rate, paced_events))
    _compare(rows)
    return rows


def _row(base: dict, protocol: str, events: int, unthrottled: list[dict], paced: dict, rate: float,
         paced_events: int) -> dict:
    good = [r for r in unthrottled if r["ok"]]
    seconds = median(r["seconds"] for r in good)
    row = dict(base, protocol=protocol, failure=False, events=events,
               records_per_s=round(events / seconds) if seconds else None,
               unthrottled_cpu_s=median(r.get("cpu_s") for r in good),
               runs=len(good), seconds_each=[r["seconds"] for r in unthrottled],
               unthrottled_recoveries=sum(r["recoveries"] for r in unthrottled),
               **_paced(paced, rate, paced_events))
    errors = [r["error"] for r in unthrottled if not r["ok"]]
    if errors and "error" not in row:
        row["error"] = errors[0]
    return row


def _failure_row(base: dict, protocol: str, failed: dict, no_failure: dict, rate: float, paced_events: int) -> dict:
    row = dict(base, protocol=protocol, failure=True, **_paced(failed, rate, paced_events))
    if failed.get("seconds") and no_failure.get("paced_seconds"):
        row["lost_s"] = round(failed["seconds"] - no_failure["paced_seconds"], 3)
    return row


def _paced(result: dict, rate: float, events: int) -> dict:
    """The fields a row takes from a paced run."""
    measured = {k: v for k, v in result.items() if k not in ("ok", "seconds", "records", "wall_seconds")}
    return dict(paced_rate=round(rate), paced_events=events, paced_seconds=result.get("seconds"), **measured)


def _compare(rows: list[dict]) -> None:
    """Overheads against ``none`` and the exactly-once check, in place."""
    none = next((r for r in rows if r["protocol"] == "none" and not r["failure"]), None)
    if none is None:
        return
    for row in rows:
        if not row["failure"] and none.get("records_per_s") and row.get("records_per_s"):
            row["throughput_overhead"] = round(1 - row["records_per_s"] / none["records_per_s"], 4)
        if not row["failure"] and none.get("unthrottled_cpu_s") and row.get("unthrottled_cpu_s"):
            row["cpu_overhead"] = round(row["unthrottled_cpu_s"] / none["unthrottled_cpu_s"] - 1, 4)
        if "output_weight" in row and "output_weight" in none:
            row["exactly_once"] = row["output_weight"] == none["output_weight"]


def _progress(query: str, protocol: str, what: str, result: dict) -> None:
    status = f"{result['seconds']:.2f} s" if result["ok"] else f"FAILED: {result['error']}"
    if result["recoveries"] and "kill" not in what:
        status += f" ({result['recoveries']} recoveries without a kill: a heartbeat timeout?)"
    progress(f"  {query:<7} {protocol:<14} {what:<16} {status}")


# ------------------------------------------------------------- the ABS overhead curve
def wordcount_run(corpus: str, protocol: str, interval: float) -> dict:
    """One wordcount run: job seconds and workers' CPU seconds (None if it failed), and the
    checkpoints completed and their mean duration."""
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as scratch:
        run = segflow_run(WORDCOUNT, {"input": corpus, "output": f"{scratch}/out", "probe": f"{scratch}/probe"},
                          protocol=protocol, interval=interval, state=f"file://{scratch}/state")
        cpu = read_probe(f"{scratch}/probe")["cpu_s"]
    rounds = [e for e in run.messages("checkpoint complete") if e["id"] < FINAL_CHECKPOINT]
    if not run.ok:
        progress(f"  wordcount {protocol} {interval} s failed: "
                 f"{'timed out' if run.timed_out else (run.tail.strip().splitlines() or ['?'])[-1]}")
    return {"seconds": run.seconds if run.ok else None, "cpu_s": cpu if run.ok else None,
            "checkpoints": len(rounds), "avg_checkpoint_s": mean(e["seconds"] for e in rounds)}


def abs_curve(settings: Settings) -> list[dict]:
    """Carbone et al.'s curve: wordcount's run time with ``aligned`` at each interval and with ``none``.
    Every round runs every configuration, rotated so none has a fixed position; each
    configuration's loss is the median over rounds of its loss against the same round's
    ``none`` run (paired, so slow drifts in the machine's load cancel); ``_best`` compares
    the fastest runs instead (load only ever slows a run down). segflow starts a
    checkpoint ``interval`` s after the previous one ENDED, so the period is the interval
    plus the checkpoint's duration: both are reported. The ``never`` point (no periodic
    checkpoint, only the one that commits the job's end) is the curve's fixed cost."""
    corpus = corpus_path(settings.wordcount_mb)
    intervals = sorted(set(settings.curve_intervals) | {1.0})
    configs = [("none", 0.0)] + [("aligned", i) for i in intervals] + [("aligned", NEVER)]
    runs: dict = {c: [] for c in configs}
    for round_ in range(settings.curve_repeats):
        shift = round_ % len(configs)
        for config in configs[shift:] + configs[:shift]:
            run = wordcount_run(corpus, *config)
            runs[config].append(run)
            took = "FAILED" if run["seconds"] is None else f"{run['seconds']:.2f} s, cpu {run['cpu_s']:.2f} s"
            progress(f"  wordcount {config[0]:<8} {_interval(config[1]):>5} s  "
                     f"round {round_ + 1}/{settings.curve_repeats}  {took}, {run['checkpoints']} checkpoints")
    baseline = runs[("none", 0.0)]
    return [_curve_point(settings, config[1], runs[config], baseline) for config in configs[1:]]


def _curve_point(settings: Settings, interval: float, runs: list[dict], baseline: list[dict]) -> dict:
    def each(key: str, of: list[dict]) -> list:
        return [r[key] for r in of]

    def paired(key: str, loss) -> float | None:
        return _round(median(loss(n, a) for n, a in zip(each(key, baseline), each(key, runs)) if n and a), 4)
    return {"kind": "abs_curve", "protocol": "aligned", "interval": _interval(interval),
            "corpus_mb": settings.wordcount_mb, "seconds": _round(median(each("seconds", runs)), 3),
            "baseline_seconds": _round(median(each("seconds", baseline)), 3),
            "throughput_loss": paired("seconds", lambda n, a: 1 - n / a),
            "throughput_loss_best": _best_loss(each("seconds", baseline), each("seconds", runs)),
            "cpu_overhead": paired("cpu_s", lambda n, a: a / n - 1),
            "checkpoints": median(each("checkpoints", runs)),
            "avg_checkpoint_s": _round(median(each("avg_checkpoint_s", runs)), 3),
            "seconds_each": each("seconds", runs), "baseline_each": each("seconds", baseline),
            "cpu_each": each("cpu_s", runs), "baseline_cpu_each": each("cpu_s", baseline)}


def _interval(seconds: float):
    return "never" if seconds == NEVER else seconds


def _best_loss(baseline: list, runs: list) -> float | None:
    """1 - fastest baseline / fastest run (None if either never finished)."""
    baseline, runs = [v for v in baseline if v], [v for v in runs if v]
    return _round(1 - min(baseline) / min(runs), 4) if baseline and runs else None


# -------------------------------------------------------------------------- output
COLUMNS = [  # header, row key, width, format spec
    ("query", "query", 7, ""), ("protocol", "protocol", 13, ""), ("fail", "failure", 5, ""),
    ("rec/s", "records_per_s", 8, ""), ("ovh", "throughput_overhead", 6, ".1%"), ("cpu+", "cpu_overhead", 6, ".0%"),
    ("p50ms", "latency_p50_ms", 7, ""), ("p99ms", "latency_p99_ms", 7, ""),
    ("chk", "checkpoints", 4, ""), ("forced", "forced_checkpoints", 6, ""),
    ("chk_s", "avg_checkpoint_s", 6, ".3f"), ("align_s", "avg_alignment_s", 7, ".3f"),
    ("netKB", "net_bytes", 7, ".0f"), ("proto%", "protocol_overhead", 7, ".2%"),
    ("logKB", "log_bytes", 6, ".0f"), ("useless", "useless_checkpoints", 7, ""),
    ("rolled", "rolled_back", 6, ""), ("detect", "detect_s", 6, ".2f"),
    ("recov_s", "recovery_s", 7, ".2f"), ("lost_s", "lost_s", 6, ".2f"), ("EO", "exactly_once", 5, ""),
]
KILOBYTES = ("net_bytes", "log_bytes")
TEXT = ("query", "protocol", "failure")     # left-aligned


def _fit(text: str, key: str, width: int) -> str:
    return f"{text:<{width}}" if key in TEXT else f"{text:>{width}}"


def _cell(row: dict, key: str, width: int, spec: str) -> str:
    value = row.get(key)
    if value is None:
        return _fit("-", key, width)
    if key in KILOBYTES:
        value = value / 1024
    return _fit(format(value, spec) if spec else str(value), key, width)


def print_tables(rows: list[dict], curve: list[dict]) -> None:
    if rows:
        progress("\n" + " ".join(_fit(h, k, w) for h, k, w, _ in COLUMNS))
        for row in rows:
            progress(" ".join(_cell(row, k, w, f) for _, k, w, f in COLUMNS) +
                     (f"  ERROR: {row['error']}" if row.get("error") else ""))
    if curve:
        progress(f"\nABS curve (wordcount, aligned vs none, p2): baseline {curve[0]['baseline_seconds']} s")
        progress(f"{'interval':>8} {'seconds':>8} {'chk':>4} {'chk_s':>6} {'loss':>7} {'best':>7} {'cpu+':>7}")
        for p in curve:
            loss, best, cpu = ("-" if v is None else f"{v:.1%}"
                               for v in (p["throughput_loss"], p["throughput_loss_best"], p["cpu_overhead"]))
            progress(f"{p['interval']:>8} {str(p['seconds']):>8} {p['checkpoints']:>4} "
                     f"{p['avg_checkpoint_s'] or '-':>6} {loss:>7} {best:>7} {cpu:>7}")


def summary(settings: Settings, mode: str, rows: list[dict], curve: list[dict]) -> dict:
    at_1s = next((p for p in curve if p["interval"] == 1.0), None)
    overheads: dict = {}
    cpu: dict = {}
    for row in rows:
        if not row["failure"] and row["protocol"] != "none":
            overheads.setdefault(row["query"], {})[row["protocol"]] = row.get("throughput_overhead")
            cpu.setdefault(row["query"], {})[row["protocol"]] = row.get("cpu_overhead")
    return {"aligned_1s_overhead": at_1s["throughput_loss"] if at_1s else None,
            "aligned_1s_overhead_best": at_1s["throughput_loss_best"] if at_1s else None,
            "aligned_1s_cpu_overhead": at_1s["cpu_overhead"] if at_1s else None,
            "abs_curve": {str(p["interval"]): p["throughput_loss"] for p in curve},
            "throughput_overhead": overheads, "cpu_overhead": cpu,
            "exactly_once_violations": [f"{r['query']}/{r['protocol']}/{'kill' if r['failure'] else 'ok'}"
                                        for r in rows if r.get("exactly_once") is False],
            "errors": [f"{r['query']}/{r['protocol']}/{'kill' if r['failure'] else 'ok'}: {r['error']}"
                       for r in rows if r.get("error")],
            "mode": mode, "interval": settings.interval, "curve_repeats": settings.curve_repeats,
            "repeats": settings.repeats}


def _round(value, digits: int = 0):
    if value is None:
        return None
    return round(value, digits) if digits else round(value)


# ---------------------------------------------------------------------------- main
def _floats(text: str) -> tuple:
    return tuple(float(x) for x in text.split(","))


_PARSE = {"int": int, "float": float, "tuple": _floats}       # by Settings' field types


def parse_args(argv=None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small inputs, one round: about 3 minutes on an idle 2-core machine")
    parser.add_argument("--queries", default=",".join(QUERIES), help="comma-separated subset of " + ",".join(QUERIES))
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="comma-separated subset (none is "
                        "always run: it is the baseline)")
    for option in fields(Settings):
        parser.add_argument("--" + option.name.replace("_", "-"), type=_PARSE[option.type], dest=option.name,
                            help=option.metadata["help"])
    parser.add_argument("--skip-queries", action="store_true")
    parser.add_argument("--skip-curve", action="store_true")
    args = parser.parse_args(argv)
    given = {option.name: getattr(args, option.name) for option in fields(Settings)}
    settings = replace(QUICK if args.quick else DEFAULT, **{k: v for k, v in given.items() if v is not None})
    for name, allowed in (("queries", QUERIES), ("protocols", PROTOCOLS)):
        unknown = set(getattr(args, name).split(",")) - set(allowed)
        if unknown:
            parser.error(f"unknown {name}: {', '.join(sorted(unknown))}")
    return settings, args


def main(argv=None) -> int:
    settings, args = parse_args(argv)
    mode = "quick" if args.quick else "default"
    queries = [q for q in QUERIES if q in args.queries.split(",")]
    protocols = [p for p in PROTOCOLS if p in args.protocols.split(",") or p == "none"]
    progress(f"checkpointing bench ({mode}): {settings}")
    rows = [] if args.skip_queries else query_matrix(settings, queries, protocols)
    curve = [] if args.skip_curve else abs_curve(settings)
    for point in curve:
        print(json.dumps(point), flush=True)
    print_tables(rows, curve)
    sys.stderr.flush()
    report("checkpointing", summary(settings, mode, rows, curve), argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
