"""Measurement probe for bench/checkpointing.py, installed by the bench jobs in worker processes.

Why a probe: segflow's metrics do not (yet) separate protocol bytes from data bytes on the
wire, nor time the local checkpoints of the ``uncoordinated`` and ``cic`` protocols (the
coordinator only logs coordinated rounds), and a worker's Prometheus counters vanish with
the process at the end of a job. So the bench jobs, which every worker imports, wrap three
engine functions in that worker and write what they saw to ``<directory>/<pid>.json``:

* ``segflow.net.dataplane.encode``: every frame sent to another worker, by body kind
  (batch, barrier, watermark, ...), plus the bytes of piggybacked protocol data
  (``protocol_meta``: HMNR vectors with ``cic``);
* ``ReplicaExecutor._local_checkpoint`` and ``CheckpointAgent._persist_local``: each local
  checkpoint's start, time on the replica's thread, time until persisted and reported to the
  coordinator, state / log / report sizes, and the ``sent``/``processed`` counters the
  coordinator builds recovery lines from (the bench recomputes useless checkpoints offline).

It also records the worker's CPU time since the job was built (``cpu_s``): on a shared
machine CPU time is far less disturbed by other users' load than wall time. And on
SIGUSR1 it dumps every thread's stack to ``<directory>/<pid>.stacks`` (faulthandler): the
bench asks for it when a run hangs, to show where.

The file is rewritten every 0.2 s, after every local checkpoint, after a channel's last
frame, at exit and on SIGTERM (how the coordinator stops finished workers; the probe writes,
then lets the signal take its default course), so a SIGKILLed worker loses at most its last
0.2 s. If the engine renames a wrapped function, that part is skipped (the bench then
reports it as unmeasured) rather than breaking the job.

What would make the probe unnecessary: a worker counter of protocol bytes by kind (barrier
frames, ``protocol_meta``) next to ``bytes_sent`` in ``RemoteOutlet.send``; a worker histogram
of local checkpoint durations and counters of local/forced checkpoints and channel-log bytes;
the coordinator logging each local checkpoint it is told about (``Report``); and per-attempt
totals sent with ``WorkerFinished``, since a worker's Prometheus endpoint dies with it.
"""
from __future__ import annotations

import atexit
import faulthandler
import json
import os
import pickle
import signal
import sys
import threading
import time

FLUSH_SECONDS = 0.2

_probe = None


def install(directory: str) -> None:
    """Start probing this process if it is a segflow worker and ``directory`` is set (idempotent:
    workers build the job again for every attempt)."""
    global _probe
    if directory and _probe is None and sys.argv[1:2] == ["worker"]:
        _probe = Probe(directory)


def _varint_size(n: int) -> int:
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


class Probe:
    def __init__(self, directory: str):
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"{os.getpid()}.json")
        self.lock = threading.Lock()
        self.writing = threading.Lock()
        self.frames: dict[str, list[int]] = {}     # body kind -> [frames, bytes]
        self.meta_bytes = 0                        # piggybacked protocol data, on the wire
        self.checkpoints: list[dict] = []          # local checkpoints, persisted and reported
        self.pending: dict[tuple, tuple] = {}      # (process, index) -> (start, sync seconds, forced)
        self.cpu_start = time.process_time()
        self.patched = [name for name, patch in (("frames", self._patch_encode),
                                                 ("local_checkpoints", self._patch_checkpoints))
                        if _try(patch)]
        threading.Thread(target=self._flush_loop, name="bench-probe", daemon=True).start()
        atexit.register(self.flush)
        self.stacks = open(os.path.join(directory, f"{os.getpid()}.stacks"), "w")
        faulthandler.register(signal.SIGUSR1, file=self.stacks, all_threads=True)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._terminated)

    def _terminated(self, signum, frame) -> None:
        self.flush()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    # ------------------------------------------------------------------ wire
    def _patch_encode(self) -> None:
        from segflow.net import dataplane
        original = dataplane.encode

        def encode(element, seq):
            frame = original(element, seq)
            self._count(frame)
            return frame
        dataplane.encode = encode

    def _count(self, frame) -> None:
        kind = frame.WhichOneof("body") or "none"
        size = frame.ByteSize()
        meta = len(frame.protocol_meta)
        with self.lock:
            entry = self.frames.setdefault(kind, [0, 0])
            entry[0] += 1
            entry[1] += size
            if meta:
                self.meta_bytes += 1 + _varint_size(meta) + meta     # field 15: a one-byte tag
        if kind == "terminate":     # a channel's last frame: the process may be stopped soon
            self.flush()

    # ----------------------------------------------------- local checkpoints
    def _patch_checkpoints(self) -> None:
        from segflow.runtime.executor import ReplicaExecutor
        from segflow.plan.placement import replica_name
        from segflow.worker.agent import CheckpointAgent
        local_checkpoint = ReplicaExecutor._local_checkpoint
        persist_local = CheckpointAgent._persist_local

        def timed_local_checkpoint(executor, forced=False):
            # keyed before the call: the background persist may finish before it returns
            key = (replica_name(executor.ctx.block, executor.ctx.index), executor.local.index + 1)
            started, clock = time.time(), time.perf_counter()
            with self.lock:
                self.pending[key] = (started, None, forced)
            local_checkpoint(executor, forced)
            with self.lock:
                if key in self.pending:
                    self.pending[key] = (started, time.perf_counter() - clock, forced)
                else:
                    self._set_sync(key, time.perf_counter() - clock)

        def timed_persist_local(agent, process, index, blob, log, record):
            persist_local(agent, process, index, blob, log, record)
            ended = time.time()
            report = {k: record[k] for k in ("sent", "processed", "forced")}
            with self.lock:
                started, sync, forced = self.pending.pop((process, index), (None, None, record.get("forced")))
                self.checkpoints.append({
                    "process": process, "index": index, "forced": bool(forced), "start": started,
                    "sync_s": sync, "total_s": None if started is None else ended - started,
                    "state_bytes": len(blob), "log_bytes": len(log),
                    "report_bytes": len(pickle.dumps(report, protocol=5)),
                    "sent": [[a, b, n] for (a, b), n in record["sent"].items()],
                    "processed": [[a, b, n] for (a, b), n in record["processed"].items()],
                })
            self.flush()            # the last ones come as the job ends: do not wait for the timer
        ReplicaExecutor._local_checkpoint = timed_local_checkpoint
        CheckpointAgent._persist_local = timed_persist_local

    def _set_sync(self, key: tuple, seconds: float) -> None:
        for c in reversed(self.checkpoints):
            if (c["process"], c["index"]) == key:
                c["sync_s"] = seconds
                return

    # ---------------------------------------------------------------- output
    def flush(self) -> None:
        with self.lock:
            data = json.dumps({"pid": os.getpid(), "patched": self.patched, "frames": self.frames,
                               "meta_bytes": self.meta_bytes, "checkpoints": self.checkpoints,
                               "cpu_s": time.process_time() - self.cpu_start})
        with self.writing:          # several threads flush; each writes a whole file
            temporary = f"{self.path}.tmp"
            with open(temporary, "w") as f:
                f.write(data)
            os.replace(temporary, self.path)

    def _flush_loop(self) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            try:
                self.flush()
            except OSError:
                return


def _try(patch) -> bool:
    try:
        patch()
        return True
    except (ImportError, AttributeError):
        return False
