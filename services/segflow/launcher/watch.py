"""Following a local job from ``segflow run``: the coordinator's stream of updates, turned
into progress lines and, at the end, the job's result. Apart from the start-up in
:mod:`.processes` so that gRPC and the stubs load while the coordinator starts."""
from __future__ import annotations

import pickle
import subprocess
from dataclasses import dataclass, field

import grpc

from ..errors import JobFailed
from ..net.limits import GRPC_OPTIONS
from ..security.identities import Identity, Role
from ..security.tls import secure_channel
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc


@dataclass
class DistributedResult:
    results: dict[int, list] = field(default_factory=dict)
    seconds: float = 0.0
    records_in: dict[int, int] = field(default_factory=dict)
    recoveries: int = 0
    last_checkpoint: int = 0


def _windows(windows) -> str:
    """Segment backup's pending windows, in one short progress field."""
    if not windows:
        return ""
    held = max(w.versions for w in windows)
    return f" | windows {sum(w.bytes for w in windows) / 1024:.0f}KiB ≤{held}v"


def watch(address: str, client: Identity, coordinator: subprocess.Popen, on_progress,
          on_event) -> DistributedResult:
    """Follow the job through the coordinator's updates until it ends: progress and events
    as they come, the results at the end; Ctrl-C cancels the job."""
    channel = secure_channel(address, client, Role.COORDINATOR, GRPC_OPTIONS)
    stub = cpb_grpc.CoordinatorStub(channel)
    final = None
    try:
        for update in stub.Watch(cpb.WatchRequest()):
            final = update
            if update.event and on_event is not None:
                on_event(update.event)
            if on_progress is not None and update.phase == cpb.JobUpdate.RUNNING:
                extra = {}
                if update.last_checkpoint:
                    extra["checkpoint"] = (f"chk {update.last_checkpoint} {update.last_checkpoint_seconds:.2f}s "
                                           f"{update.last_checkpoint_bytes / 1024:.0f}KiB "
                                           f"align {update.last_alignment_seconds * 1000:.0f}ms"
                                           + _windows(update.windows))
                on_progress({b.block: b.records_in for b in update.blocks},
                            {b.block: b.name for b in update.blocks}, **extra)
    except grpc.RpcError as exc:
        raise JobFailed(f"lost the coordinator at {address} (exit code {coordinator.poll()}): "
                        f"{exc.details()}") from exc
    except KeyboardInterrupt as exc:
        try:
            stub.Cancel(cpb.CancelRequest(reason=f"interrupted ({exc or 'Ctrl-C'})"), timeout=2)
        except grpc.RpcError:
            pass
        raise
    finally:
        channel.close()
    if final is None or final.phase != cpb.JobUpdate.SUCCEEDED:
        raise JobFailed(final.error if final is not None and final.error else "the job did not finish")
    results = pickle.loads(final.results) if final.results else {}
    return DistributedResult(results, final.seconds, {b.block: b.records_in for b in final.blocks},
                             final.recoveries, final.last_checkpoint)
