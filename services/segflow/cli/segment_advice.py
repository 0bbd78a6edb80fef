"""``segflow plan JOB --segment-backup``: the cost model of Shen, Segment Backup, chapter 4,
fed by a short calibration run, and the connectors and barrier interval it chooses.

The calibration runs the job in this process for ``--calibrate`` seconds and measures,
per block, the CPU seconds per tuple (its service time), its output ratio, and the
spout's rate; the state store's write and read time per tuple is timed on a sample blob
(in ``--state`` if given, else a temporary directory). What cannot be observed in one
process (network delay, restart time, sizes) takes the documented defaults below, each
overridable. The model covers linear topologies (chapter 4); for other shapes the plan
says so and points to ``--connectors auto``.
"""
from __future__ import annotations

import argparse
import json
import pickle
import tempfile
import time

from ..checkpoint.catalog import Catalog
from ..checkpoint.segment_choice import Choice, choose
from ..checkpoint.segment_cost import Delays, Pipeline, Prices, UnstableQueue
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


def chain_of(graph: JobGraph) -> list[int]:
    """The blocks of a linear job from its source to its sink, or a clear refusal."""
    sources = [b.id for b in graph.blocks if not graph.inputs_of(b.id)]
    fanned = [b.id for b in graph.blocks if len(graph.inputs_of(b.id)) > 1 or len(graph.outputs_of(b.id)) > 1]
    if len(sources) != 1 or fanned:
        raise SegflowError("the cost model covers linear pipelines (Shen, Segment Backup, chapter 4), and this "
                           f"job has {len(sources)} source(s) and blocks that split or merge ({fanned}); run it with "
                           "--connectors auto, or list connectors by block id")
    chain = sources
    while graph.outputs_of(chain[-1]):
        chain.append(graph.outputs_of(chain[-1])[0].dst)
    return chain


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


def calibrated_pipeline(graph: JobGraph, chain: list[int], seconds: float, tuple_bytes: float) -> Pipeline:
    runtime = LocalRuntime(1)
    result = runtime.execute(graph, run_for=seconds)
    executors = {rid.block: ex for rid, ex in runtime.executors.items()}
    out = {b: executors[b].router.records_out for b in chain}
    out[chain[-1]] = executors[chain[-1]].records_in
    if not out[chain[0]]:
        raise SegflowError(f"the calibration run read nothing in {seconds} s: give the job's parameters "
                           "(-p) so that it reads input, or a longer --calibrate")
    service = tuple(executors[b].cpu_seconds / max(1, executors[b].records_in or out[b]) for b in chain)
    ratios = tuple(out[b] / max(1, out[a]) for a, b in zip(chain, chain[1:]))
    return Pipeline(service=service, ratios=ratios, connectors=frozenset({1, len(chain)}), block=2.0,
                    rate=out[chain[0]] / max(result.seconds, 1e-6), tuple_bytes=tuple_bytes,
                    barrier_bytes=64.0, checkpoint_bytes=4096.0, ack_bytes=64.0)


def advise(graph: JobGraph, args: argparse.Namespace, state_url: str, s3_endpoint: str | None,
           job_name: str = "") -> Choice:
    """Calibrate, choose, print; with ``state_url``, record both beside job ``job_name``'s
    state, where ``--connectors auto`` finds them."""
    chain = chain_of(graph)
    pipeline = calibrated_pipeline(graph, chain, args.calibrate, args.tuple_bytes)
    write, read = _store_seconds_per_tuple(state_url, s3_endpoint)
    delays = Delays(edge=NETWORK_PER_TUPLE, transmit=NETWORK_PER_TUPLE, read=read, write=write,
                    normal=sum(pipeline.service) / len(pipeline.service), barrier=BARRIER_SECONDS, ack=ACK_SECONDS,
                    recover_response=args.restart_seconds, recover_misc=0.1)
    try:
        choice = choose(pipeline, delays, _prices(args.prices), args.max_recovery_delay)
    except UnstableQueue as exc:
        raise SegflowError(f"at the calibrated rate: {exc}") from None
    print(f"calibrated {len(chain)} blocks for {args.calibrate:g} s: {pipeline.rate:.0f} tuples/s from the source; "
          "per block CPU s/tuple " + ", ".join(f"b{b} {t * 1e6:.1f}us" for b, t in zip(chain, pipeline.service)))
    print(f"store: write {write * 1e6:.2f}us, read {read * 1e6:.2f}us per tuple")
    blocks = [chain[n - 1] for n in choice.connectors]
    print(f"connectors: {', '.join(f'block {b}' for b in blocks)}; barrier every {choice.interval:g} s")
    print(f"predicted recovery delay {choice.recovery_delay:.2f} s "
          f"({'within' if choice.meets_target else 'MISSES'} --max-recovery-delay {args.max_recovery_delay:g} s)")
    print(f"overhead: {100 * choice.overhead_time:.2f}% of a CPU, {choice.overhead_bytes_per_s / 1024:.1f} KiB/s "
          f"sent, {choice.storage_bytes / 1024:.1f} KiB stored, ${choice.money_per_hour:.6f}/hour")
    for node, tuples in choice.windows.items():
        print(f"  pending window of block {chain[node - 1]}: {tuples:.0f} tuples on average")
    inner = [str(b) for b in blocks[1:-1]]
    print(f"run with: --checkpoint-protocol segment --connectors {','.join(inner) or 'none'} "
          f"--checkpoint-interval {choice.interval:g}")
    if state_url:
        record = {"layout": layout(graph), "connectors": sorted(blocks), "interval": choice.interval,
                  "predicted_recovery_delay_s": choice.recovery_delay,
                  "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "measured": {"rate": pipeline.rate, "service_s": list(pipeline.service),
                               "ratios": list(pipeline.ratios), "write_s_per_tuple": write,
                               "read_s_per_tuple": read}}
        Catalog(open_backend(state_url, s3_endpoint), job_name).write_segment_choice(record)
        print(f"recorded beside job {job_name!r} in {redact_url(state_url)}: segflow run --checkpoint-protocol "
              "segment --connectors auto (the default) uses this choice while the pipeline keeps this layout")
    return choice
