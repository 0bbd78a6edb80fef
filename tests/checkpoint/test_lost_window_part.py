"""A window part a replay found missing (``SegmentLedger.lose_part``): the regional plan
made from the ledger no longer counts on it, so the connector that needed it joins the
region (rule of ``checkpoint.regional``: a boundary that cannot replay restarts)."""
from segflow.checkpoint.regional import regional_recovery
from segflow.checkpoint.segment_plan import SegmentLedger
from segflow.checkpoint.segments import Topology

# source (connector) -> plain -> window (connector) -> sink (connector)
CHAIN = Topology.of((0, 1, 2, 3), ((0, 1), (1, 2), (2, 3)), {0, 2, 3})
PLACEMENT = {0: {"w0"}, 1: {"w1"}, 2: {"w1"}, 3: {"w2"}}


def _plan(ledger: SegmentLedger[int]):
    windows = {connector: set(parts) for connector, parts in ledger.parts.items()}
    return regional_recovery(CHAIN, PLACEMENT, ["w2"], ledger.complete, windows, ledger.heads)


def test_a_lost_part_makes_its_connector_join_the_region():
    ledger = SegmentLedger(CHAIN, {n: 1 for n in CHAIN.nodes})
    ledger.seed({0: {1, 2, 3}, 1: {1, 2, 3}, 2: {1, 2, 3}, 3: {1}}, {0: {1, 2, 3}, 2: {1, 2, 3}})
    before = _plan(ledger)
    assert before.region == {3} and [(r.connector, r.first, r.live) for r in before.replays] == [(2, 2, True)]
    ledger.lose_part(2, 2)
    grown = _plan(ledger)
    # block 2 restarts (with its segment) below the lost part, so nothing replays it
    assert {1, 2, 3} <= grown.region and grown.restart[2] < 2 == grown.restart[1] + 1
    assert not any(r.connector == 2 and r.first <= 2 <= r.through for r in grown.replays)
    ledger.lose_part(2, 9)          # a part the ledger never had: nothing changes
    assert _plan(ledger) == grown
