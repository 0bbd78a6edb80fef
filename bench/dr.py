"""Benchmark (not a test): datacenter-disaster recovery on two local Kubernetes clusters.

East runs the job (bench/jobs/dr_chain.py: a Redis stream in, windowed counts out to
another Redis stream, exactly once), west stands by; both reach one S3 server (moto) and
one Redis outside them. Each round deletes east's namespace mid-run (the namespace is the
datacenter here; tests/disaster covers whole-cluster loss and partitions too) and west restores
the job from the backup store with ``failoverAfterSeconds: 10``. Configurations: ``abs``
(the aligned protocol: every block restores the last complete checkpoint) and segment
backup with 2 (``none``: source and sink), 3 (block 2 too) and 4 connectors (blocks 1
and 3 too). Per round:

* RTO: from the fault to the first output west commits (the first sink entry appended
  after east's lease deadline, when east can no longer commit);
* RPO: records lost (the oracle's windows missing from the output; must be 0), and
  records duplicated (must be 0);
* records reprocessed: records the first operator processed over both clusters, minus the
  input (a lower bound: counts not yet flushed when east is lost are lost with it);
* the operator's own measure (``status.disasterRecovery.lastFailover.rtoSeconds``: from
  east's last lease renewal to west running the job).

The last line is one JSON object: ``rto_s`` (the worst round; target <= 30),
``records_lost`` (all rounds; target 0), ``segment_rto_over_abs`` (per connector count:
mean RTO over the mean RTO of abs) and per-configuration means.

    .venv/bin/python bench/dr.py [--rounds 3] [--configs abs,seg2,seg3,seg4] [--events 12000]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("SEGFLOW_TEST_CLUSTER", "bench")      # clusters of its own, beside the tests' ones
sys.path[:0] = [os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "tests", "disaster")]

from common import mean, report  # noqa: E402
from scenario import NAMESPACE, REDIS_PASSWORD, Scenario, Site  # noqa: E402
from segflow.disaster.lease_store import LeaseStore  # noqa: E402
from support.clusters import ensure_built  # noqa: E402
from support.servers import start_redis, start_s3  # noqa: E402

JOB = os.path.join(HERE, "jobs", "dr_chain.py")
CONFIGS = {"abs": ("aligned", ""), "seg2": ("segment", "none"), "seg3": ("segment", "2"), "seg4": ("segment", "1,3")}
FAILOVER_AFTER = 10.0


def first_commit_after(run: Scenario, seconds: float) -> float | None:
    """When the first sink entry later than ``seconds`` (Unix time) was appended (its id)."""
    after = run.redis.xrange(run.sink, f"{int(seconds * 1000) + 1}-0", "+", count=1)
    return int(after[0][0].split("-")[0]) / 1000 if after else None


def one_round(config: str, index: int, sites: dict, redis_url: str, s3_endpoint: str, events: int) -> dict:
    east, west = sites["east"], sites["west"]
    protocol, connectors = CONFIGS[config]
    counter = f"dr-bench:{config}-{index}:processed"
    run = Scenario(f"{config}-{index}", redis_url, REDIS_PASSWORD, events=events, rate=800,
                   failover_after=FAILOVER_AFTER, protocol=protocol, connectors=connectors, job=JOB,
                   extra={"counter": counter})
    run.redis.delete(counter)
    try:
        run.start(east, west)
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        fault = time.time()
        final = run.wait_phase(west, "Completed", "Failed", timeout=240)
        lease, _ = LeaseStore(run.backup, f"{NAMESPACE}.{run.name}", s3_endpoint).read()
        east_deadline = lease.previous_renewed_at + FAILOVER_AFTER - min(2.0, FAILOVER_AFTER / 2)
        committed = first_commit_after(run, max(east_deadline, fault))
        output, expected = run.output(), run.expected()
        return {"config": config, "round": index, "phase": final["phase"],
                "rto_s": round(committed - fault, 2) if committed else None,
                "operator_rto_s": final.get("disasterRecovery", {}).get("lastFailover", {}).get("rtoSeconds"),
                "records_lost": sum((expected - output).values()), "duplicated": sum((output - expected).values()),
                "reprocessed": int(run.redis.get(counter) or 0) - events}
    finally:
        if east.namespace_deleted():
            run.delete(west)
            east.restore_namespace()
        else:                                            # the round failed before the fault
            run.delete(east, west)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--events", type=int, default=12000)
    args = parser.parse_args()
    configs = args.configs.split(",")
    ensure_built()
    s3, redis_server = start_s3(), start_redis(password=REDIS_PASSWORD)
    sites = {"east": Site("east", s3.endpoint), "west": Site("west", s3.endpoint)}
    rows = []
    try:
        for site in sites.values():
            site.up()
        for index in range(args.rounds):                 # interleaved: the machine's noise hits every config
            for config in configs:
                row = one_round(config, index, sites, redis_server.url, s3.endpoint, args.events)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        for site in sites.values():
            site.down()
        redis_server.cleanup()
        s3.cleanup()
    means = {c: mean([r["rto_s"] for r in rows if r["config"] == c and r["rto_s"] is not None]) for c in configs}
    print(f"{'config':8} {'rto_s':>7} {'operator':>9} {'lost':>5} {'dup':>4} {'reprocessed':>12}")
    for c in configs:
        mine = [r for r in rows if r["config"] == c]
        print(f"{c:8} {means[c] or 0:7.2f} {mean([r['operator_rto_s'] or 0 for r in mine]):9.2f} "
              f"{sum(r['records_lost'] for r in mine):5d} {sum(r['duplicated'] for r in mine):4d} "
              f"{mean([r['reprocessed'] for r in mine]):12.0f}")
    rtos = [r["rto_s"] for r in rows if r["rto_s"] is not None]
    report("dr", {
        "rto_s": max(rtos) if len(rtos) == len(rows) else None,
        "records_lost": sum(r["records_lost"] for r in rows),
        "records_duplicated": sum(r["duplicated"] for r in rows),
        "segment_rto_over_abs": {c: round(means[c] / means["abs"], 3) for c in configs
                                 if c != "abs" and means.get("abs") and means.get(c)},
        "mean_rto_s": means,
        "mean_reprocessed": {c: mean([r["reprocessed"] for r in rows if r["config"] == c]) for c in configs},
        "rounds": args.rounds, "failover_after_s": FAILOVER_AFTER})


if __name__ == "__main__":
    main()
