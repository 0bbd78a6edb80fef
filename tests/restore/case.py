"""One entry of the restore registry: how to build an operator, what to feed it, and what
its output is. Adding an operator or a connector to the property is one :class:`RestoreCase`."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import strategies as st

from segflow.runtime.operator import Operator

from .drive import Placement


@dataclass
class Site:
    """The resources of one example: a directory, the servers, the records a source reads,
    and which run (uninterrupted "a" or restored "b") builds the operator, since each run
    writes its own output."""

    directory: str
    placement: Placement
    data: Any = None
    redis_url: str = ""
    s3_endpoint: str = ""
    run: str = "a"
    example: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def output(self) -> str:
        """A name (file directory, S3 prefix, stream) that only this example's run uses."""
        return f"out-{self.example}-{self.run}"

    @property
    def clock(self) -> Callable[[], float]:
        """Processing time: the position of the event being fed, the same in both runs."""
        return lambda: self.placement.now


def recorded(site: Site, log: list) -> list:
    """The output of most operators: what the driver recorded."""
    return log


@dataclass(frozen=True)
class RestoreCase:
    """``make(site)`` builds the operator; ``events`` draws what it is fed. A source also
    has ``data`` (drawn, then written by ``prepare(site)`` where it must live outside);
    a sink's output is what ``observe(site, log)`` finds published. ``needs`` names the
    servers it uses ("redis", "s3"); ``examples`` how many inputs hypothesis tries (fewer for
    cases that talk to a server)."""

    name: str
    operator: type[Operator]
    make: Callable[[Site], Operator]
    events: st.SearchStrategy
    data: st.SearchStrategy = st.none()
    prepare: Callable[[Site], None] = lambda site: None
    observe: Callable[[Site, list], Any] = recorded
    needs: tuple[str, ...] = ()
    examples: int = 40
