"""Benchmark (not a test): datacenter-disaster recovery on two local Kubernetes clusters,
per standby mode (cold, warm, hot) and protocol (ABS and segment backup).

East runs the job (bench/jobs/dr_chain.py: a Redis stream in, windowed counts out to
another Redis stream, exactly once), west stands by; both reach one S3 server (moto), west
through a proxy that counts its requests, and one Redis outside them. Each round lets west
stand by for a while (measured: its cost), then deletes east's namespace mid-run (the
namespace is the datacenter here; tests/disaster covers whole-cluster loss and partitions
too) and west takes over with ``failoverAfterSeconds: 2``. Configurations: ``<mode>-abs``
(the aligned protocol: every block restores the last complete checkpoint) and
``<mode>-seg`` (segment backup, source and sink connectors). Per round:

* RTO: from the fault to the first output west commits (the first sink entry appended
  after west took the lease: east may still commit the sink of a checkpoint it published
  before its deadline until then, within the lease's guard, and never after);
* records lost (the oracle's windows missing from the output; must be 0) and records
  duplicated (must be 0);
* the standby's cost per minute while it stands by: CPU seconds of west's job pods, and
  west's S3 requests (all of them, and those under the job's keys, without the operator's
  lease reads);
* where the RTO goes: from the fault to west taking the lease (``fault_to_takeover_s``:
  east's operator seeing its namespace's ``deletionTimestamp`` on a watch, which then
  stops renewing, plus ``failoverAfterSeconds``), and from the takeover to the first commit
  (``takeover_to_commit_s``: what the standby mode changes: pods, restore, first
  checkpoint);
* rounds that could not be timed (``failed_rounds``: say a loaded machine let east's
  lease lapse before the fault, so east fenced itself and west took over early) are
  listed with why, and left out of the figures;
* the operator's own measure (``status.disasterRecovery.lastFailover.rtoSeconds``: from
  east's last lease renewal to west running the job).

The last line is one JSON object: ``rto_s`` (per configuration and per mode: median and
worst round; targets hot median <= 5 s, hot worst <= 8 s, warm <= 8 s), its two parts,
``records_lost``
and ``records_duplicated`` (all rounds; target 0), ``cost_per_minute`` (per mode).

    .venv/bin/python bench/dr.py [--rounds 5] [--configs cold-abs,warm-abs,...] [--events 16000]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys
import threading
import time

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("SEGFLOW_TEST_CLUSTER", "bench")      # clusters of its own, beside the tests' ones
sys.path[:0] = [os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "tests", "disaster")]

from common import report  # noqa: E402
from scenario import NAMESPACE, REDIS_PASSWORD, Scenario, Site  # noqa: E402
from segflow.disaster.lease_store import LeaseStore  # noqa: E402
from support.clusters import ensure_built  # noqa: E402
from support.proxy import TcpProxy  # noqa: E402
from support.servers import start_redis, start_s3  # noqa: E402

JOB = os.path.join(HERE, "jobs", "dr_chain.py")
PROTOCOLS = {"abs": ("aligned", ""), "seg": ("segment", "none")}
MODES = ("cold", "warm", "hot")
CONFIGS = [f"{mode}-{protocol}" for mode in MODES for protocol in PROTOCOLS]
FAILOVER_AFTER = 2.0
STANDING_SECONDS = 8.0             # how long each round measures the standby's cost
_REQUEST = re.compile(rb"(?m)^(GET|PUT|POST|HEAD|DELETE) (\S+) HTTP/1\.[01]\r$")


class CountingProxy(TcpProxy):
    """The proxy of tests/support, counting the HTTP requests that pass it upstream: all,
    and those under the job's keys (``/jobs/``)."""

    def __init__(self, host: str, port: int):
        super().__init__(host, port)
        self.requests = self.job_requests = 0
        self.counted = threading.Lock()

    def sent(self, data: bytes) -> None:
        paths = [m.group(2) for m in _REQUEST.finditer(data)]
        with self.counted:
            self.requests += len(paths)
            self.job_requests += sum(1 for p in paths if b"/jobs/" in p or b"prefix=backup%2Fjobs" in p)

    def counts(self) -> tuple[int, int]:
        with self.counted:
            return self.requests, self.job_requests


def pod_cpu_seconds(site: Site, job: str) -> float:
    """CPU seconds so far of every process of ``job``'s pods on ``site``."""
    total = 0.0
    for path in glob.glob(os.path.join(site.cluster.pods_dir(), f"{NAMESPACE}_{job}-*", "*.pid")):
        try:
            with open(path) as f:
                leader = psutil.Process(int(f.read().split()[0]))
            for p in [leader, *leader.children(recursive=True)]:
                times = p.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except (OSError, ValueError, psutil.Error):
            continue
    return total


def first_commit_after(run: Scenario, seconds: float) -> float | None:
    """When the first sink entry later than ``seconds`` (Unix time) was appended (its id)."""
    after = run.redis.xrange(run.sink, f"{int(seconds * 1000) + 1}-0", "+", count=1)
    return int(after[0][0].split("-")[0]) / 1000 if after else None


def standing_cost(run: Scenario, west: Site, proxy: CountingProxy) -> dict:
    """West's cost while it stands by, per minute, over STANDING_SECONDS."""
    if run.standby != "cold":
        run.wait_warm(west)
    if run.standby == "hot":
        run.wait_following(west)
    cpu, (requests, job_requests), start = pod_cpu_seconds(west, run.name), proxy.counts(), time.monotonic()
    time.sleep(STANDING_SECONDS)
    elapsed = time.monotonic() - start
    cpu_after, (requests_after, job_after) = pod_cpu_seconds(west, run.name), proxy.counts()
    per_minute = 60.0 / elapsed
    return {"cpu_s": round((cpu_after - cpu) * per_minute, 2),
            "s3_requests": round((requests_after - requests) * per_minute, 1),
            "s3_job_requests": round((job_after - job_requests) * per_minute, 1)}


def one_round(config: str, index: int, sites: dict, redis_url: str, s3_endpoint: str, proxy: CountingProxy,
              events: int) -> dict:
    east, west = sites["east"], sites["west"]
    mode, protocol_name = config.split("-")
    protocol, connectors = PROTOCOLS[protocol_name]
    run = Scenario(f"{config}-{index}", redis_url, REDIS_PASSWORD, events=events, rate=800,
                   failover_after=FAILOVER_AFTER, protocol=protocol, connectors=connectors, job=JOB,
                   extra={"counter": f"dr-bench:{config}-{index}:processed"}, standby=mode)
    try:
        run.start(east, west)
        cost = standing_cost(run, west, proxy)
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        fault = time.time()
        final = run.wait_phase(west, "Completed", "Failed", timeout=240)
        lease, _ = LeaseStore(run.backup, f"{NAMESPACE}.{run.name}", s3_endpoint).read()
        committed = first_commit_after(run, max(lease.taken_at, fault))
        output, expected = run.output(), run.expected()
        return {"config": config, "mode": mode, "round": index, "phase": final["phase"],
                "rto_s": round(committed - fault, 2) if committed else None,
                "fault_to_takeover_s": round(lease.taken_at - fault, 2),
                "takeover_to_commit_s": round(committed - lease.taken_at, 2) if committed else None,
                "operator_rto_s": final.get("disasterRecovery", {}).get("lastFailover", {}).get("rtoSeconds"),
                "records_lost": sum((expected - output).values()), "duplicated": sum((output - expected).values()),
                "standing": cost}
    finally:
        if east.namespace_deleted():
            run.delete(west)
            east.restore_namespace()
        else:                                            # the round failed before the fault
            run.delete(east, west)


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 2), "max": round(max(values), 2), "n": len(values)} \
        if values else {"median": None, "max": None, "n": 0}


def summary(rows: list[dict], configs: list[str], rounds: int) -> dict:
    modes = [m for m in MODES if any(c.startswith(m + "-") for c in configs)]

    def rtos(match) -> list[float]:
        return [r["rto_s"] for r in rows if match(r) and r["rto_s"] is not None]

    def cost(mode: str, what: str) -> float:
        return round(statistics.mean(r["standing"][what] for r in rows if r["mode"] == mode), 2)

    return {
        "rto_s": {**{c: spread(rtos(lambda r, c=c: r["config"] == c)) for c in configs},
                  **{m: spread(rtos(lambda r, m=m: r["mode"] == m)) for m in modes}},
        "takeover_to_commit_s": {**{c: spread([r["takeover_to_commit_s"] for r in rows if r["config"] == c
                                               and r["takeover_to_commit_s"] is not None]) for c in configs},
                                 **{m: spread([r["takeover_to_commit_s"] for r in rows if r["mode"] == m
                                               and r["takeover_to_commit_s"] is not None]) for m in modes}},
        "fault_to_takeover_s": {m: spread([r["fault_to_takeover_s"] for r in rows if r["mode"] == m]) for m in modes},
        "rounds_without_rto": sum(1 for r in rows if r["rto_s"] is None),
        "records_lost": sum(r["records_lost"] for r in rows),
        "records_duplicated": sum(r["duplicated"] for r in rows),
        "cost_per_minute": {m: {w: cost(m, w) for w in ("cpu_s", "s3_requests", "s3_job_requests")} for m in modes},
        "operator_rto_s": {c: spread([r["operator_rto_s"] for r in rows if r["config"] == c
                                      and r["operator_rto_s"] is not None]) for c in configs},
        "rounds": rounds, "failover_after_s": FAILOVER_AFTER, "standing_seconds": STANDING_SECONDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--events", type=int, default=16000)
    args = parser.parse_args()
    configs = args.configs.split(",")
    ensure_built()
    s3, redis_server = start_s3(), start_redis(password=REDIS_PASSWORD)
    proxy = CountingProxy("127.0.0.1", s3.port)
    sites = {"east": Site("east", s3.endpoint), "west": Site("west", proxy.endpoint)}
    rows: list[dict] = []
    failed: list[dict] = []
    try:
        for site in sites.values():
            site.up()
        for index in range(args.rounds):                 # interleaved: the machine's noise hits every config
            for config in configs:
                try:
                    row = one_round(config, index, sites, redis_server.url, s3.endpoint, proxy, args.events)
                except AssertionError as exc:        # e.g. east fenced before the fault: no disaster to time
                    row = {"config": config, "mode": config.split("-")[0], "round": index, "failed": str(exc)[:500]}
                    failed.append(row)
                else:
                    rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        for site in sites.values():
            site.down()
        proxy.close()
        redis_server.cleanup()
        s3.cleanup()
    result = {**summary(rows, configs, args.rounds), "failed_rounds": failed}
    print(f"{'config':10} {'median':>7} {'worst':>6} {'lost':>5} {'dup':>4}")
    for c in configs:
        mine = [r for r in rows if r["config"] == c]
        print(f"{c:10} {result['rto_s'][c]['median'] or 0:7.2f} {result['rto_s'][c]['max'] or 0:6.2f} "
              f"{sum(r['records_lost'] for r in mine):5d} {sum(r['duplicated'] for r in mine):4d}")
    report("dr", result)


if __name__ == "__main__":
    main()
