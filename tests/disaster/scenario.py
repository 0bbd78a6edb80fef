"""The two sites of the disaster-recovery tests (and bench/dr.py), and one run: the job's
input in Redis, its StreamJob applied to both sites, and what is read back (status,
output, the oracle's answer)."""
from __future__ import annotations

import collections
import contextlib
import glob
import json
import os
import secrets
import signal
from collections.abc import Callable

import redis

from segflow.coordinator.checkpoints import REVISION_IDS
from support.clusters import Cluster, local_chart_values, pods_from_images, reachable_from_pods, wait_for
from support.jobfiles import files_volume, pod_path
from support.processes import ROOT
from support.servers import new_bucket

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "dr_counts.py")
PREFIX = os.environ.get("SEGFLOW_TEST_CLUSTER", "test")
NAMESPACE = "dr"
REDIS_PASSWORD = "redis-pw-7f3a9c51"        # values a test searches for everywhere the operator writes
S3_SECRET = "s3-secret-2b8e1d44"


class Site:
    """One cluster of the pair, with the operator installed and the job namespace ready.
    Its pods run from the images (SEGFLOW_TEST_PODS; the job file reaches them by a
    configMap volume, see Scenario.apply) or, in the fast mode, from the host's filesystem;
    in both, each has a network namespace of its own (netns mode) and reaches the S3 and
    Redis servers on the host's loopback through relays in the site's node namespace
    (support.clusters.reachable_from_pods), so a partition can cut them off for real
    (partition.py)."""

    def __init__(self, name: str, s3_endpoint: str):
        self.name = name
        self.cluster = Cluster(f"{PREFIX}-dr-{name}", pod_network="" if pods_from_images() else "netns")
        self.host_s3_endpoint = s3_endpoint
        self.s3_endpoint = s3_endpoint        # as the pods reach it, once up
        self.relays = contextlib.ExitStack()
        self.pod_urls: dict[str, str] = {}
        self.after_up: list[Callable[[], None]] = []     # e.g. the link to the other site, made again

    def up(self) -> None:
        self.cluster.up()
        self.s3_endpoint = self.pod_url(self.host_s3_endpoint)
        # the operator keeps the lease in S3: its credentials from a Secret, as a site would
        self.cluster.kubectl("create", "namespace", "segflow-system")
        self.s3_secret("segflow-system")
        self.cluster.helm("install", "segflow", os.path.join(ROOT, "charts", "segflow"),
                          "--namespace", "segflow-system", "--wait", "--timeout", "90s",
                          "--set", "envFrom[0].secretRef.name=segflow-s3", *local_chart_values((self.s3_endpoint,)))
        self.namespace()
        for hook in self.after_up:
            hook()

    def pod_url(self, url: str) -> str:
        """``url`` of a server on the host's loopback as this site's pods reach it (a relay
        kept until the site goes down)."""
        if url not in self.pod_urls:
            self.pod_urls[url] = self.relays.enter_context(reachable_from_pods(self.cluster, url))
        return self.pod_urls[url]

    def s3_secret(self, namespace: str) -> None:
        self.cluster.kubectl("create", "secret", "generic", "segflow-s3", "-n", namespace,
                             "--from-literal=AWS_ACCESS_KEY_ID=segflow-dr",
                             f"--from-literal=AWS_SECRET_ACCESS_KEY={S3_SECRET}")

    def namespace(self) -> None:
        """The job namespace and its Secrets (what a namespace deletion takes away)."""
        c = self.cluster
        c.kubectl("create", "namespace", NAMESPACE)
        self.s3_secret(NAMESPACE)
        c.kubectl("create", "secret", "generic", "segflow-redis", "-n", NAMESPACE,
                  f"--from-literal=SEGFLOW_REDIS_PASSWORD={REDIS_PASSWORD}")

    def namespace_deleted(self) -> bool:
        """The job namespace is gone or going (a disaster struck it)."""
        found = self.cluster.kubectl("get", "namespace", NAMESPACE, check=False)
        return found.returncode != 0 or "Terminating" in found.stdout

    def restore_namespace(self) -> None:
        """The job namespace again (once its deletion has finished), if it was deleted."""
        if self.namespace_deleted():
            wait_namespace_gone(self)
            self.namespace()

    def down(self) -> None:
        self.relays.close()
        self.pod_urls.clear()
        self.cluster.down()

    def kill(self) -> list[int]:
        """The datacenter is lost: SIGKILL every process of the cluster at once (control
        plane, node agent, and every pod's process group), with no chance to clean up."""
        pids = list(self.cluster.pids().values())
        groups = []
        for path in glob.glob(os.path.join(self.cluster.pods_dir(), "*", "*.pid")):
            with open(path) as f:
                groups.append(int(f.read().split()[0]))
        for pid in pids:
            _kill(lambda: os.kill(pid, signal.SIGKILL))
        for pid in groups:
            _kill(lambda: os.killpg(pid, signal.SIGKILL))
        return pids + groups

    def rebuild(self) -> None:
        """A new cluster where the lost one was (its processes' leftovers stopped first)."""
        self.down()
        self.up()


def _kill(send) -> None:
    try:
        send()
    except ProcessLookupError:
        pass


def event_key(i: int) -> str:
    return f"k{(i * 7919) % 13}"


class Scenario:
    """``name`` names the StreamJob, its streams and its backup store. ``protocol``,
    ``connectors`` and ``job`` (a job file taking redis, source, sink, events and rate
    parameters, and ``extra`` ones) let the benchmark compare configurations."""

    def __init__(self, name: str, redis_url: str, password: str, events: int = 16000, rate: int = 800,
                 failover_after: float = 10.0, protocol: str = "segment", connectors: str = "", job: str = JOB,
                 extra: dict | None = None, standby: str = "warm"):
        self.name, self.redis_url, self.events, self.rate = name, redis_url, events, rate
        self.standby = standby
        self.failover_after, self.protocol, self.connectors, self.job = failover_after, protocol, connectors, job
        self.extra = extra or {}
        self.source, self.sink = f"{name}:events", f"{name}:counts"
        self.backup = f"s3://{new_bucket()}/backup"
        self.state_key = secrets.token_hex(32)
        self.redis = redis.Redis.from_url(redis_url, password=password, decode_responses=True)
        self.redis.delete(self.source, self.sink, f"segflow:commits:{self.sink}")
        pipe = self.redis.pipeline(transaction=False)
        for i in range(events):
            pipe.xadd(self.source, {"k": event_key(i), "t": i})
        pipe.execute()

    def manifest(self, site, role: str) -> dict:
        parameters = {"redis": site.pod_url(self.redis_url), "source": self.source, "sink": self.sink,
                      "events": self.events, "rate": self.rate, **self.extra}
        checkpointing = {"protocol": self.protocol, "intervalSeconds": 1,
                         **({"connectors": self.connectors} if self.connectors else {})}
        return {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": self.name},
                "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2,
                         "job": {"module": pod_path(site.cluster, self.job),
                                 "parameters": {k: str(v) for k, v in parameters.items()}},
                         "checkpointing": checkpointing,
                         "disasterRecovery": {"backupUrl": self.backup, "role": role, "clusterName": site.name,
                                              "failoverAfterSeconds": self.failover_after,
                                              "standby": self.standby,
                                              "s3Endpoint": site.s3_endpoint},
                         "podTemplate": {"envFrom": [{"secretRef": {"name": "segflow-s3"}},
                                                     {"secretRef": {"name": "segflow-redis"}}],
                                         **files_volume(f"{self.name}-job")}}}

    def start(self, primary, standby, checkpoints: int = 3) -> None:
        """The job applied to both sites, running in the primary until it has taken
        ``checkpoints`` checkpoints, the standby standing by."""
        self.apply(standby, "standby")
        self.apply(primary, "primary")
        self.wait_checkpoints(primary, checkpoints)

    def apply(self, site, role: str) -> None:
        """The StreamJob, after the Secret with the key that seals its state: the same in
        every cluster, so a failover can restore what the other cluster stored."""
        site.cluster.kubectl("create", "secret", "generic", f"{self.name}-state-key", "-n", NAMESPACE,
                             f"--from-literal=key={self.state_key}", check=False)
        site.cluster.kubectl("create", "configmap", f"{self.name}-job", "-n", NAMESPACE,
                             f"--from-file={self.job}", check=False)
        site.cluster.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(self.manifest(site, role)))

    def status(self, site) -> dict:
        found = site.cluster.kubectl("get", "sj", self.name, "-n", NAMESPACE, "-o", "json", check=False, timeout=10)
        return (json.loads(found.stdout).get("status") or {}) if found.returncode == 0 else {}

    def wait_phase(self, site, *phases: str, timeout: float = 90.0) -> dict:
        seen = {}

        def reached():
            seen.update(self.status(site))
            return seen.get("phase") in phases and dict(seen)
        try:
            return wait_for(reached, timeout, f"{self.name} in {site.name} to be {' or '.join(phases)}", interval=0.5)
        except AssertionError as exc:
            events = site.cluster.kubectl("get", "events", "-n", NAMESPACE, check=False).stdout
            raise AssertionError(f"{exc}\nstatus: {json.dumps(seen, indent=1)}\nevents:\n{events[-3000:]}\n"
                                 f"{self.warnings(site)}") from None

    def warnings(self, site, most: int = 40) -> str:
        """The warnings and errors this job's pods in ``site`` logged, newest last."""
        found = []
        for path in glob.glob(os.path.join(site.cluster.pods_dir(), f"{NAMESPACE}_{self.name}-*", "*.log")):
            pod = os.path.basename(os.path.dirname(path))
            with open(path, errors="replace") as f:
                for line in f:
                    if '"level": "warning"' in line or '"level": "error"' in line:
                        found.append((json.loads(line).get("ts", 0), f"{pod}: {line.strip()[:300]}"))
        return "pod warnings:\n" + "\n".join(text for _, text in sorted(found)[-most:])

    def wait_checkpoints(self, site, count: int, timeout: float = 60.0) -> dict:
        # Ids count from revision * 2**32 (see coordinator.checkpoints.first_checkpoint_id): compare within one.
        return wait_for(lambda: ((s := self.status(site)).get("lastCheckpoint") or {}).get("id", 0) % REVISION_IDS
                        >= count % REVISION_IDS and s,
                        timeout, f"{count} checkpoints of {self.name} in {site.name}", interval=0.5)

    def output(self) -> collections.Counter:
        return collections.Counter((f["k"], int(f["n"])) for _, f in self.redis.xrange(self.sink))

    def expected(self) -> collections.Counter:
        windows = collections.Counter((event_key(i), i // 100) for i in range(self.events))
        return collections.Counter((k, n) for (k, _), n in windows.items())

    def running_pods(self, site, through_revision: int | None = None) -> list[str]:
        """The job's pods in ``site`` that are pending or running (of the revisions up to
        ``through_revision`` only: a side that lost the lease keeps none of the pods it ran
        the job with, and a warm one starts new pods of a later revision to stand by)."""
        return [p["metadata"]["name"] for p in self.pods(site)
                if p["status"].get("phase") in ("Pending", "Running") and
                (through_revision is None or int(p["metadata"]["labels"]["segflow.io/revision"]) <= through_revision)]

    def pods(self, site) -> list[dict]:
        found = site.cluster.kubectl("get", "pods", "-n", NAMESPACE, "-l", f"segflow.io/job={self.name}", "-o",
                                     "json", check=False, timeout=10)
        return json.loads(found.stdout)["items"] if found.returncode == 0 else []

    def wait_warm(self, site, timeout: float = 90.0) -> dict[str, str]:
        """Once ``site`` stands by warm with every worker ready: its pods, name -> uid."""
        wait_for(lambda: (self.status(site).get("disasterRecovery") or {}).get("standby", {}).get("readyWorkers")
                 == "2/2", timeout, f"{self.name}'s warm standby in {site.name}", interval=0.5)
        return {p["metadata"]["name"]: p["metadata"]["uid"] for p in self.pods(site)
                if p["status"].get("phase") == "Running"}

    def wait_following(self, site, timeout: float = 60.0) -> dict:
        """Once ``site``'s hot standby shows in its status that its workers follow the
        store: that part of the status."""
        def following():
            shown = (self.status(site).get("disasterRecovery") or {}).get("standby") or {}
            return shown if (shown.get("followedVersion") or 0) > 0 else None
        return wait_for(following, timeout, f"{self.name}'s hot standby in {site.name} to follow", interval=0.5)

    def delete(self, *sites) -> None:
        for site in sites:
            site.cluster.kubectl("delete", "sj", self.name, "-n", NAMESPACE, "--wait=false", check=False)
        for site in sites:
            wait_for(lambda: not self.running_pods(site), 60, f"{self.name}'s pods in {site.name} to end")
        self.redis.close()


def wait_namespace_gone(site, timeout: float = 120.0) -> None:
    wait_for(lambda: site.cluster.kubectl("get", "namespace", NAMESPACE, check=False).returncode != 0, timeout,
             f"namespace {NAMESPACE} in {site.name} to be deleted", interval=0.5)
