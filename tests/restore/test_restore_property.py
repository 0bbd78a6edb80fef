"""Restore equivalence, operator by operator: an operator snapshotted at a random cut,
pickled (pickle or cloudpickle), restored into a fresh instance from the same factory and
fed the rest produces exactly what an uninterrupted instance produces (records, their
timestamps and order, control elements, side outputs, published output), even when the
crashed instance went on past its snapshot. Its state never holds a bare ``object()``."""
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .case import Site
from .drive import restored, uninterrupted
from .registry import CASES
from .streams import interruptions, placements


def run_both(case, draw, servers) -> tuple:
    """The (uninterrupted, restored) outputs of one drawn example of ``case``."""
    events = draw(case.events, label="events")
    crash = draw(interruptions(events), label="crash")
    with tempfile.TemporaryDirectory() as directory:
        site = Site(directory, draw(placements(), label="placement"), data=draw(case.data, label="data"), **servers)
        case.prepare(site)
        build = lambda: _built(case, site)   # noqa: E731 - the factory both runs call
        site.run = "a"
        whole = case.observe(site, uninterrupted(build, events, site.placement))
        site.run = "b"
        resumed = case.observe(site, restored(build, events, site.placement, crash))
    return whole, resumed


def _built(case, site):
    built = case.make(site)
    assert type(built) is case.operator, f"{case.name} builds a {type(built).__name__}, not a {case.operator.__name__}"
    return built


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_restored_operator_continues_exactly_like_an_uninterrupted_one(case, request):
    servers = {}
    if "redis" in case.needs:
        servers["redis_url"] = request.getfixturevalue("redis_server").url
    if "s3" in case.needs:
        servers["s3_endpoint"] = request.getfixturevalue("s3_server").endpoint

    @settings(max_examples=case.examples, deadline=None, database=None)
    @given(draw=st.data())
    def restores_equivalently(draw):
        whole, resumed = run_both(case, draw.draw, servers)
        assert resumed == whole

    restores_equivalently()
