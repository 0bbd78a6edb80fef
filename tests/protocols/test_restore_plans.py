"""A restore plan reaches every worker as the coordinator made it: through the assignment's
typed oneof, with no pickle, for each kind (and for none)."""
from hypothesis import given
from hypothesis import strategies as st

from segflow.checkpoint.restore_plan import LineRestore, SegmentRestore
from segflow.net.control_codec import recovery_fields, restore_plan
from segflow.v1 import control_pb2 as cpb

versions = st.integers(min_value=0, max_value=2**40)
blocks = st.integers(min_value=0, max_value=50)
processes = st.from_regex(r"b[0-9]{1,2}\.r[0-9]{1,2}", fullmatch=True)
ranges = st.tuples(versions, versions)


def _through_the_wire(plan):
    sent = cpb.Assignment(job_id="j", **recovery_fields(plan))
    return restore_plan(cpb.Assignment.FromString(sent.SerializeToString()))


@given(st.dictionaries(blocks, versions, min_size=1), st.dictionaries(st.tuples(blocks, blocks), ranges),
       st.frozensets(blocks), versions)
def test_a_segment_restore_arrives_whole(versions_of, replays, kept, through):
    plan = SegmentRestore(versions_of, replays, kept, through)
    assert _through_the_wire(plan) == plan


@given(st.dictionaries(processes, versions, min_size=1), st.dictionaries(st.tuples(processes, processes), ranges))
def test_a_recovery_line_arrives_whole(line, replay):
    plan = LineRestore(line, replay)
    assert _through_the_wire(plan) == plan


def test_no_plan_is_no_plan():
    assert recovery_fields(None) == {}
    assert _through_the_wire(None) is None


def test_a_plan_says_what_it_restores():
    assert SegmentRestore({2: 5, 0: 3}).describe() == "b0:v3 b2:v5"
    assert SegmentRestore({2: 5}, kept=frozenset({1, 0}), through=7).describe() == \
        "b2:v5 (regional: b0 b1 kept running)"
    assert LineRestore({"b1.r0": 4, "b0.r0": 2}).describe() == "recovery line b0.r0:2 b1.r0:4"
