"""What ``segflow run`` starts ends when ``segflow run`` is gone.

``segflow run`` starts its coordinator (and a ``--batch-stage``) in a session of its own,
so that it can stop each with everything it started as one group. A ``segflow run``
killed outright (SIGKILL, the OOM killer, a crash) stops nothing: without this watch its
job ran on unseen, writing its outputs and checkpoints beside whatever ran next, a
``--restore latest`` of the same job included. Each child is told its parent's pid
(``--parent``) and watches it.
"""
from __future__ import annotations

import os
import threading
from typing import Callable


def watch_parent(parent: int, on_gone: Callable[[str], None], done: threading.Event, every: float = 0.2) -> None:
    """Until ``done`` is set: once this process's parent is no longer ``parent`` (it exited,
    and the system handed this process to another), call ``on_gone`` with the reason."""
    while not done.wait(every):
        if os.getppid() != parent:
            on_gone(f"its segflow run (pid {parent}) is gone")
            return
