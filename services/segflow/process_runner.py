"""Where the API finds the multi-process launcher.

The launcher sits above the API (it loads job modules, which build environments), so the
package installs it here when it is imported instead of the API importing it; this
module imports nothing of segflow's, so that installing costs nothing (a coordinator or
worker process imports the package before anything else, and should not pay for the API).
"""
from __future__ import annotations

from typing import Any, Callable

ProcessRunner = Callable[[Any, Any, "Callable | None", "Callable | None"], Any]
_runner: ProcessRunner | None = None


def install(runner: ProcessRunner) -> None:
    """``runner(job_spec, config, on_progress, on_event)`` runs a job module on a
    coordinator and worker processes."""
    global _runner
    _runner = runner


def installed() -> ProcessRunner | None:
    return _runner
