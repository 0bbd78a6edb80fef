"""Benchmark (not a test): one job through at least 10 disasters chosen at random with a
seed, on two local Kubernetes clusters with a hot standby (``failoverAfterSeconds: 2``).

The job (tests/disaster/jobs/dr_counts.py: a Redis stream in, windowed counts out to
another Redis stream, exactly once) runs in whichever cluster holds its lease. Each
disaster strikes the cluster that runs it, so takeovers alternate between the clusters:

* ``namespace``: the job's namespace is deleted (then created again, the job applied
  there as the standby);
* ``kill``: every process of the cluster is SIGKILLed (then the cluster is rebuilt and
  the job applied there as the standby);
* ``partition``: the cluster loses the S3 store (its proxy cut) until the other holds the
  lease, then the network heals;
* ``operator``: the operator's pod is SIGKILLed (its lease renewals stop until it is back);
* ``outage``: the store is unreachable from both clusters for 3 s.

Every takeover's RTO (from the fault to the first output committed by the cluster that
took over: the first sink entry after its takeover) is printed as it happens. At the end
the output must equal the plain-Python oracle exactly. The last line is one JSON object:
the disasters with their RTO, and ``records_lost`` and ``records_duplicated`` (target 0).

    .venv/bin/python bench/dr_chaos.py [--seed 7] [--disasters 10] [--events 200000] [--rate 250]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("SEGFLOW_TEST_CLUSTER", "chaos")      # clusters of its own, beside the tests' ones
sys.path[:0] = [os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "tests", "disaster")]

from common import report  # noqa: E402
from dr import first_commit_after  # noqa: E402
from scenario import NAMESPACE, REDIS_PASSWORD, Scenario, Site  # noqa: E402
from segflow.disaster.lease_store import LeaseStore  # noqa: E402
from support.clusters import ensure_built, wait_for  # noqa: E402
from support.proxy import TcpProxy  # noqa: E402
from support.servers import start_redis, start_s3  # noqa: E402

KINDS = ("namespace", "kill", "partition", "operator", "outage")
FAILOVER_AFTER = 2.0
OUTAGE_SECONDS = 3.0


class Chaos:
    """The two sites, their proxies to S3, the job, and who holds its lease."""

    def __init__(self, s3_port: int, s3_endpoint: str, redis_url: str, events: int, rate: int):
        self.proxies = {name: TcpProxy("127.0.0.1", s3_port) for name in ("east", "west")}
        self.sites = {name: Site(name, proxy.endpoint) for name, proxy in self.proxies.items()}
        self.s3_endpoint = s3_endpoint
        self.run = Scenario("chaos", redis_url, REDIS_PASSWORD, events=events, rate=rate,
                            failover_after=FAILOVER_AFTER, standby="hot")
        self.lease = LeaseStore(self.run.backup, f"{NAMESPACE}.{self.run.name}", s3_endpoint)

    def holder(self) -> tuple[str, int, float]:
        lease, _ = self.lease.read()
        assert lease is not None, "the job has no lease"
        return lease.owner, lease.generation, lease.taken_at

    def other(self, name: str) -> Site:
        return self.sites["west" if name == "east" else "east"]

    def standing_by(self, name: str) -> None:
        """``name``'s hot standby is up and follows."""
        site = self.sites[name]
        self.run.wait_phase(site, "Standby", timeout=120)
        self.run.wait_warm(site, timeout=120)
        self.run.wait_following(site, timeout=120)

    def strike(self, kind: str, site: Site) -> None:
        if kind == "namespace":
            site.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        elif kind == "kill":
            site.kill()
        elif kind == "partition":
            self.proxies[site.name].cut()
        elif kind == "operator":
            for path in glob.glob(os.path.join(site.cluster.pods_dir(), "segflow-system_segflow-*", "*.pid")):
                with open(path) as f:
                    os.killpg(int(f.read().split()[0]), signal.SIGKILL)
        elif kind == "outage":
            for proxy in self.proxies.values():
                proxy.cut()
            time.sleep(OUTAGE_SECONDS)
            for proxy in self.proxies.values():
                proxy.heal()

    def repair(self, kind: str, site: Site) -> None:
        """``site`` as it was before ``kind`` struck it, the job applied there again if it went."""
        if kind == "namespace":
            site.restore_namespace()
            self.run.apply(site, "standby")
        elif kind == "kill":
            site.rebuild()
            self.run.apply(site, "standby")
        elif kind == "partition":
            self.proxies[site.name].heal()


def one_disaster(chaos: Chaos, index: int, kind: str) -> dict:
    owner, generation, _ = chaos.holder()
    site, other = chaos.sites[owner], chaos.other(owner)
    chaos.standing_by(other.name)
    fault = time.time()
    chaos.strike(kind, site)
    taken = kind in ("namespace", "kill", "partition")
    if taken:
        wait_for(lambda: chaos.holder()[1] > generation, 60, f"{other.name} to take the lease", interval=0.2)
    else:                                        # the holder may or may not lose it: whoever holds it runs
        time.sleep(FAILOVER_AFTER * 3)
    new_owner, new_generation, taken_at = chaos.holder()
    runner = chaos.sites[new_owner]
    chaos.run.wait_phase(runner, "Running", "Completed", timeout=120)
    rto = None
    if new_generation > generation:
        committed = wait_for(lambda: first_commit_after(chaos.run, max(taken_at, fault)), 120,
                             f"{new_owner}'s first commit", interval=0.2)
        rto = round(committed - fault, 2)
    chaos.repair(kind, site)
    row = {"disaster": index, "kind": kind, "struck": owner, "holder": new_owner, "generation": new_generation,
           "takeover": new_generation > generation, "rto_s": rto}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--disasters", type=int, default=10)
    parser.add_argument("--events", type=int, default=200000)
    parser.add_argument("--rate", type=int, default=250)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds = [rng.choice(KINDS) for _ in range(args.disasters)]
    ensure_built()
    s3, redis_server = start_s3(), start_redis(password=REDIS_PASSWORD)
    chaos = Chaos(s3.port, s3.endpoint, redis_server.url, args.events, args.rate)
    rows = []
    try:
        for site in chaos.sites.values():
            site.up()
        chaos.run.start(chaos.sites["east"], chaos.sites["west"])
        for index, kind in enumerate(kinds):
            rows.append(one_disaster(chaos, index, kind))
        owner, _, _ = chaos.holder()
        final = chaos.run.wait_phase(chaos.sites[owner], "Completed", "Failed", timeout=args.events / args.rate + 300)
        output, expected = chaos.run.output(), chaos.run.expected()
    finally:
        for site in chaos.sites.values():
            site.down()
        for proxy in chaos.proxies.values():
            proxy.close()
        redis_server.cleanup()
        s3.cleanup()
    rtos = [r["rto_s"] for r in rows if r["rto_s"] is not None]
    report("dr_chaos", {"seed": args.seed, "disasters": rows, "phase": final["phase"],
                        "takeovers": sum(1 for r in rows if r["takeover"]),
                        "rto_s": {"median": sorted(rtos)[len(rtos) // 2] if rtos else None,
                                  "max": max(rtos, default=None)},
                        "records_lost": sum((expected - output).values()),
                        "records_duplicated": sum((output - expected).values()),
                        "output_equals_oracle": output == expected, "failover_after_s": FAILOVER_AFTER})


if __name__ == "__main__":
    main()
