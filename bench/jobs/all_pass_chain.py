"""Seed 004's experiment topology: a linear chain of seven nodes (a generator spout, five
all-pass filter bolts, a sink), each hop a network exchange so every node is its own
block. Every bolt takes ``service`` seconds per tuple (slept, like I/O-bound work, so the
nodes of one worker process do not contend for the interpreter) and appends
``node index unix-time`` for each tuple to ``probe`` (unbuffered: the lines survive a
SIGKILL), which is how bench/segment_backup.py sees when each node first operates on
input newer than before a failure (the thesis's Definition 1). ``batch_timeout``: how long
a block holds records for a batch (segflow's default 50 ms; the thesis's Storm topology
sends each tuple at once). The spout catches up after a restore (``catch_up``): the tuples
that arrived while the job was down wait as a backlog, as the thesis's recovery-delay model
(equation 4.2) has the restored nodes work through what is pending at their service rate."""
import os
import time

from segflow import BatchMode

NODES = 7


class Probe:
    def __init__(self, node: int, service: float, path: str):
        self.node, self.service, self.path = node, service, path
        self.fd = None

    def __getstate__(self):
        return {"node": self.node, "service": self.service, "path": self.path, "fd": None}

    def __call__(self, x):
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        time.sleep(self.service)
        os.write(self.fd, f"{self.node} {x} {time.time():.6f}\n".encode())
        return True


def build(env, output, probe, events="1000000", rate="300", service="0.00125", batch_timeout="0.05"):
    stream = env.generate(lambda i: i, count=int(events), rate=float(rate), catch_up=True).batch_mode(
        BatchMode.adaptive(1024, float(batch_timeout)))
    for node in range(2, NODES):
        stream = stream.shuffle().filter(Probe(node, float(service), probe))
    stream.shuffle().filter(Probe(NODES, 0.0, probe)).map(str).write_text(output)
