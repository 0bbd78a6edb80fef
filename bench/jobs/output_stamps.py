"""bench/standby.py's job: a paced count through a shuffle into a file sink, whose last
map writes ``<build time> <now>`` to ``<probe>/<pid>`` at most every 2 ms. A worker builds
the job again for every attempt (after its earlier attempt's replicas stopped), so the
build time tells the output of an attempt started after a kill from the one it ended."""
import os
import time

_built = [0.0]          # when this process last built the job: its current attempt


class Stamp:
    def __init__(self, probe):
        self.probe, self.last, self.file = probe, 0.0, None

    def __getstate__(self):
        return {**self.__dict__, "file": None}

    def __call__(self, record):
        now = time.time()
        if now - self.last >= 0.002:
            if self.file is None:
                self.file = open(os.path.join(self.probe, str(os.getpid())), "a", buffering=1, encoding="utf-8")
            self.file.write(f"{_built[0]:.6f} {now:.6f}\n")
            self.last = now
        return record


def build(env, output, probe, count="40000", rate="2000"):
    os.makedirs(probe, exist_ok=True)
    _built[0] = time.time()
    (env.generate(lambda i: i, count=int(count), rate=float(rate))
        .shuffle()
        .map(Stamp(probe))
        .write_text(output))
