"""``segflow plan JOB --segment-backup``: the cost model of Shen, Segment Backup, chapter 4,
fed by a short calibration run, and the connectors and barrier interval it chooses.

The calibration runs the job in this process for ``--calibrate`` seconds and measures,
per block, the CPU seconds per tuple (its service time), its output ratio, and the
spout's rate; the state store's write and read time per tuple is timed on a sample blob
(in ``--state`` if given, else a temporary directory). What cannot be observed in one
process (network delay, restart time, a checkpoint's duration, sizes) takes the documented
defaults below, each overridable; the record keeps them (``given``) apart from what was
measured. The model is chapter 4's, per source-to-sink path for a job that splits or
merges (:mod:`segflow.checkpoint.segment_cost_dag` says how the paths combine).
"""
from __future__ import annotations

import argparse
import json
import pickle
import tempfile
import time

from ..checkpoint.catalog import Catalog
from ..checkpoint.segment_choice import Choice, choose
from ..checkpoint.connectors import required_connectors
from ..checkpoint.segment_cost import Delays, Prices, UnstableQueue
from ..checkpoint.segment_cost_dag import Dag, paths
from ..errors import SegflowError
from ..plan.graph import JobGraph
from ..plan.signature import layout
from ..redaction import redact_url
from ..runtime.local import LocalRuntime
from ..state import open_backend

NETWORK_PER_TUPLE = 50e-6    # t^e: loopback gRPC, batched
BARRIER_SECONDS = 1e-3       # t^b: snapshot and relay of one barrier at one node
ACK_SECONDS = 1e-3           # t^a
SAMPLE_TUPLES = 10_000


def _prices(path: str | None) -> Prices:
    if not path:
        return Prices()
    try:
        with open(path, encoding="utf-8") as f:
            return Prices(**json.load(f))
    except (OSError, ValueError, TypeError) as exc:
        raise SegflowError(f"--prices {path}: {exc}; give JSON with per_cpu_second, per_network_byte and "
                           "per_stored_byte_second") from None


def _store_seconds_per_tuple(state_url: str, s3_endpoint: str | None) -> tuple[float, float]:
    """Write and read time per tuple, on a blob of ``SAMPLE_TUPLES`` small tuples."""
    blob = pickle.dumps([(i, f"value-{i}") for i in range(SAMPLE_TUPLES)], protocol=5)
    with tempfile.TemporaryDirectory() as tmp:
        backend = open_backend(state_url or f"file://{tmp}", s3_endpoint)
        key = "calibration/segment-backup-sample"
        started = time.perf_counter()
        backend.put(key, blob)
        wrote = time.perf_counter() - started
        backend.get(key)
        read = time.perf_counter() - started - wrote
        backend.delete([key])
    return wrote / SAMPLE_TUPLES, read / SAMPLE_TUPLES


def calibrated_dag(graph: JobGraph, seconds: float, tuple_bytes: float) -> Dag:
    """The job run here for ``seconds``: each block's CPU seconds per tuple, each channel's
    tuples per second and the sources' rate."""
    runtime = LocalRuntime(1)
    result = runtime.execute(graph, run_for=seconds)
    elapsed = max(result.seconds, 1e-6)
    executors = {rid.block: ex for rid, ex in runtime.executors.items()}
    flows: dict[tuple[int, int], float] = {}
    for block, executor in executors.items():
        for to_block, sender in executor.router.by_destination():
            if to_block >= 0:
                flows[(block, to_block)] = flows.get((block, to_block), 0.0) + sender.records_out / elapsed
    sources = [b.id for b in graph.blocks if not graph.inputs_of(b.id)]
    rate = sum(max((f for (u, _), f in flows.items() if u == s), default=0.0) for s in sources)
    if not rate:
        raise SegflowError(f"the calibration run read nothing in {seconds} s: give the job's parameters "
                           "(-p) so that it reads input, or a longer --calibrate")
    service = {b: ex.cpu_seconds / max(1, ex.records_in or ex.router.records_out) for b, ex in executors.items()}
    ends = set(required_connectors(graph))
    return Dag(service=service, flows=flows, connectors=frozenset(ends), block=2.0, rate=rate,
               tuple_bytes=tuple_bytes, barrier_bytes=64.0, checkpoint_bytes=4096.0, ack_bytes=64.0)


def advise(graph: JobGraph, args: argparse.Namespace, state_url: str, s3_endpoint: str | None,
           job_name: str = "") -> Choice:
    """Calibrate, choose, print; with ``state_url``, record both beside job ``job_name``'s
    state, where ``--connectors auto`` finds them."""
    dag = calibrated_dag(graph, args.calibrate, args.tuple_bytes)
    write, read = _store_seconds_per_tuple(state_url, s3_endpoint)
    delays = Delays(edge=NETWORK_PER_TUPLE, transmit=NETWORK_PER_TUPLE, read=read, write=write,
                    normal=sum(dag.service.values()) / len(dag.service), barrier=BARRIER_SECONDS, ack=ACK_SECONDS,
                    recover_response=args.restart_seconds, recover_misc=0.1, checkpoint=args.checkpoint_seconds,
                    serial_send=True)
    try:
        choice = choose(dag, delays, _prices(args.prices), args.max_recovery_delay)
    except UnstableQueue as exc:
        raise SegflowError(f"at the calibrated rate: {exc}") from None
    print(f"calibrated {len(dag.service)} blocks ({len(paths(dag))} source-to-sink path(s)) for {args.calibrate:g} s: "
          f"{dag.rate:.0f} tuples/s from the source(s); per block CPU s/tuple "
          + ", ".join(f"b{b} {t * 1e6:.1f}us" for b, t in sorted(dag.service.items())))
    print(f"store: write {write * 1e6:.2f}us, read {read * 1e6:.2f}us per tuple")
    blocks = list(choice.connectors)
    print(f"connectors: {', '.join(f'block {b}' for b in blocks)}; barrier every {choice.interval:g} s")
    print(f"predicted recovery delay {choice.recovery_delay:.2f} s "
          f"({'within' if choice.meets_target else 'MISSES'} --max-recovery-delay {args.max_recovery_delay:g} s)")
    print(f"overhead: {100 * choice.overhead_time:.2f}% of a CPU, {choice.overhead_bytes_per_s / 1024:.1f} KiB/s "
          f"sent, {choice.storage_bytes / 1024:.1f} KiB stored, ${choice.money_per_hour:.6f}/hour")
    for block, tuples in choice.windows.items():
        print(f"  pending window of block {block}: {tuples:.0f} tuples on average")
    inner = [str(b) for b in blocks if b not in dag.sources | dag.sinks]
    print(f"run with: --checkpoint-protocol segment --connectors {','.join(inner) or 'none'} "
          f"--checkpoint-interval {choice.interval:g}")
    if state_url:
        record = {"layout": layout(graph), "connectors": sorted(blocks), "interval": choice.interval,
                  "predicted_recovery_delay_s": choice.recovery_delay,
                  "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "measured": {"rate": dag.rate, "service_s": {str(b): t for b, t in sorted(dag.service.items())},
                               "flows": {f"{u}>{v}": f for (u, v), f in sorted(dag.flows.items())},
                               "write_s_per_tuple": write, "read_s_per_tuple": read},
                  "given": {"restart_s": delays.recover_response, "recover_misc_s": delays.recover_misc,
                            "checkpoint_s": delays.checkpoint, "edge_s": delays.edge, "barrier_s": delays.barrier,
                            "ack_s": delays.ack}}
        Catalog(open_backend(state_url, s3_endpoint), job_name).write_segment_choice(record)
        print(f"recorded beside job {job_name!r} in {redact_url(state_url)}: segflow run --checkpoint-protocol "
              "segment --connectors auto (the default) uses this choice while the pipeline keeps this layout")
    return choice
