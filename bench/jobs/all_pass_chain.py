"""The experiment topology of Shen, Segment Backup: a linear chain of seven nodes (a
generator spout and six all-pass filter bolts, the last of which writes the output), each
hop a network exchange so every node is its own block. As in the thesis's experiment
(§4.3: a pipeline of M/M/1 queues), the spout emits as a Poisson process of ``rate`` and
every bolt takes an exponentially distributed time per tuple with mean ``service`` (slept,
like I/O-bound work, so the nodes of one worker process do not contend for the
interpreter; seeded per node). Every bolt appends
``node index unix-time`` for each tuple to ``probe`` (unbuffered: the lines survive a
SIGKILL), which is how bench/segment_backup.py sees when each node first operates on
input newer than before a failure (the thesis's Definition 1). ``batch_size`` and
``batch_timeout``: how many records a block sends at most in one batch, and how long it holds
them (segflow's defaults 1,024 and 50 ms; the thesis's Storm topology sends each tuple at
once). The spout catches up after a restore (``catch_up``): the tuples that arrived while
the job was down wait as a backlog, as the thesis's recovery-delay model (equation 4.2) has
the restored nodes work through what is pending at their service rate. ``dear`` names one
node whose mean service time is ``dear_factor`` times the others' (bench/segment_backup.py
``--scenario worker-loss``). ``deterministic=1`` declares the job deterministic (its
output is; only the probe's timings are random), so a regional recovery keeps the
consumers of a restarted node running (``--keep-consumers``)."""
import os
import random
import time

from segflow import BatchMode

NODES = 7


class Probe:
    def __init__(self, node: int, service: float, path: str):
        self.node, self.service, self.path = node, service, path
        self.fd = self.times = None

    def __getstate__(self):
        return {"node": self.node, "service": self.service, "path": self.path, "fd": None, "times": None}

    def __call__(self, x):
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self.times = random.Random(self.node)
        if self.service:
            time.sleep(self.times.expovariate(1 / self.service))
        os.write(self.fd, f"{self.node} {x} {time.time():.6f}\n".encode())
        return True


def build(env, output, probe, events="1000000", rate="300", service="0.00125", batch_size="1024",
          batch_timeout="0.05", dear="0", dear_factor="5", deterministic="0"):
    if int(deterministic):
        env.declare_deterministic()
    stream = env.generate(lambda i: i, count=int(events), rate=float(rate), catch_up=True,
                          arrivals="poisson").batch_mode(
        BatchMode.adaptive(int(batch_size), float(batch_timeout)))
    for node in range(2, NODES + 1):
        cost = float(service) * (float(dear_factor) if node == int(dear) else 1.0)
        stream = stream.shuffle().filter(Probe(node, cost, probe))
    stream.map(str).write_text(output)
