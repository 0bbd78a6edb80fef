"""Exceptions segflow raises to users.

Each carries a message that says what went wrong and what to do about it; the CLI
prints the message without a traceback.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator

EXIT_STORE_UNREACHABLE = 75
"""A coordinator's exit code when the state store stayed unreachable (``EX_TEMPFAIL``):
the operator redeploys the job rather than failing it."""

EXIT_FENCED = 77
"""A coordinator's exit code when it fenced itself (``EX_NOPERM``: its lease no longer let
it publish): not a failure of the job, whose holder redeploys it (the operator reads this
even when the pod's message no longer shows the ``fenced:`` line)."""


class SegflowError(Exception):
    """Base of every error segflow raises on purpose."""


@contextlib.contextmanager
def explained(error: type[SegflowError], where: str, what: str,
              caught: type[BaseException] | tuple[type[BaseException], ...],
              hint: Callable[[BaseException], str]) -> Iterator[None]:
    """Raise a failure of ``caught`` inside the block as ``error("{where}: {what} {hint}")``:
    how the state stores and connectors turn a client library's exceptions into messages
    that name the store, the operation, and what to do (``hint(exc)``, e.g. "failed: cannot
    reach the endpoint ...; is the S3 server up?")."""
    try:
        yield
    except caught as exc:
        raise error(f"{where}: {what} {hint(exc)}") from exc


class PipelineError(SegflowError):
    """The pipeline was built in a way the engine cannot run (found while building)."""


class JobLoadError(SegflowError):
    """The job module could not be found, imported, or called with the given parameters."""


class JobFailed(SegflowError):
    """The job started but stopped with an error (a user function raised, an I/O error...)."""


@dataclass(eq=False, repr=False)
class UserFunctionError(JobFailed):
    """A user function raised while processing a record.

    Names the operator, where in the job code it was defined, the replica, and the
    record's position in that replica's input so the user can find the bad record.
    """

    operator: str
    location: str
    replica: str
    position: int
    record: object
    cause: BaseException
    context: str = ""

    def __post_init__(self) -> None:
        shown = repr(self.record)
        if len(shown) > 200:
            shown = shown[:197] + "..."
        within = f" ({self.context})" if self.context else ""
        super().__init__(
            f"{self.operator} (defined at {self.location}) raised {type(self.cause).__name__}: {self.cause}\n"
            f"  on record #{self.position} of replica {self.replica}{within}: {shown}")
