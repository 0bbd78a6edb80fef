"""How large one gRPC message of segflow's may be, on every channel and server.

gRPC's default of 4 MB is too small for a batch of large records on the data plane and for
the results a worker gathered for ``collect()`` on the control plane."""
from __future__ import annotations

MESSAGE_LIMIT = 256 * 1024 * 1024

GRPC_OPTIONS = [
    ("grpc.max_send_message_length", MESSAGE_LIMIT),
    ("grpc.max_receive_message_length", MESSAGE_LIMIT),
]

RESULTS_LIMIT = MESSAGE_LIMIT - 1024 * 1024     # room for the rest of a finish or watch message


def results_too_large(size: int) -> str:
    """Why a job whose ``collect()`` gathered ``size`` bytes on worker processes failed."""
    return (f"collect() gathered {size / 2**20:.0f} MiB of results on the worker processes, more than one "
            f"control-plane message may carry ({RESULTS_LIMIT / 2**20:.0f} MiB): write the output with a "
            "file sink (write_text, write_jsonl, write_s3) instead, or collect less")
