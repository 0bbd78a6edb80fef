"""A kept consumer's inbound channel positions (net.positions): what a restarted sender
sends again is skipped element for element, the old connection is fenced (pure)."""
import pytest

from segflow.net.positions import ChannelPositions, SkipImpossible
from segflow.runtime.elements import END, Barrier, Batch, Watermark

KEY = (3, 1, 4, 1, 0)         # b3.r1 -> b4.r1, input 0


def run(sender_output):
    """A sender's output on one channel, as a replay of its version 0 would send it again."""
    return [Batch(list(items)) if isinstance(items, tuple) else items for items in sender_output]


OUTPUT = [("a", "b"), Barrier(1), ("c", "d", "e"), Watermark(5), Barrier(2), ("f",), ("g", "h"), END]


def records(taken):
    return [item for element in taken if type(element) is Batch for item in element.items]


def deliver(positions, position, attempt, elements):
    return [out for e in elements if (out := positions.admit(position, attempt, e)) is not None]


@pytest.mark.parametrize("cut", range(len(OUTPUT) + 1))
@pytest.mark.parametrize("version", [0, 1, 2])
def test_a_resent_channel_gives_the_receiver_every_element_once_wherever_the_sender_was_lost(cut, version):
    positions = ChannelPositions()
    first = positions.open(KEY, "job-a0")
    taken = deliver(positions, first, "job-a0", run(OUTPUT)[:cut])
    reached = {b.checkpoint_id for b in taken if type(b) is Barrier} | {0}
    if version not in reached:
        with pytest.raises(SkipImpossible, match="has not passed"):
            positions.resend(3, 4, version, "job-a1")
        return
    skips = positions.resend(3, 4, version, "job-a1")
    assert deliver(positions, first, "job-a0", run(OUTPUT)[cut:]) == []          # the old connection is fenced
    after = OUTPUT[[i for i, e in enumerate(OUTPUT) if e == Barrier(version)][0] + 1:] if version else OUTPUT
    again = positions.open(KEY, "job-a1")
    taken += deliver(positions, again, "job-a1", run(after))
    assert records(taken) == list("abcdefgh")
    assert [e for e in taken if type(e) is Barrier] == [Barrier(1), Barrier(2)]
    assert taken[-1] == END and sum(1 for e in taken if e == END) == 1
    assert set(skips) == {KEY}


def test_a_skip_ending_inside_a_batch_takes_the_rest_of_it_with_its_timestamps():
    positions = ChannelPositions()
    position = positions.open(KEY, "job-a0")
    deliver(positions, position, "job-a0", [Batch(["a"], [1]), Barrier(1), Batch(["b"], [2])])
    assert positions.resend(3, 4, 1, "job-a1") == {KEY: 1}
    again = positions.open(KEY, "job-a1")
    [rest] = deliver(positions, again, "job-a1", [Batch(["b", "c", "d"], [2, 3, 4])])
    assert rest.items == ["c", "d"] and rest.timestamps == [3, 4]


def test_completed_versions_are_forgotten_and_cannot_be_skipped_from():
    positions = ChannelPositions()
    position = positions.open(KEY, "job-a0")
    deliver(positions, position, "job-a0", run(OUTPUT[:5]))
    positions.forget_through(2)
    with pytest.raises(SkipImpossible, match="forgotten"):
        positions.resend(3, 4, 1, "job-a1")
    assert positions.resend(3, 4, 2, "job-a1") == {KEY: 0}


def test_only_the_channels_from_the_restarted_block_to_the_consumer_are_resent():
    positions = ChannelPositions()
    other = (2, 0, 4, 1, 1)
    kept = positions.open(other, "job-a0")
    positions.open(KEY, "job-a0")
    assert set(positions.resend(3, 4, 0, "job-a1")) == {KEY}
    assert deliver(positions, kept, "job-a0", [Batch(["x"])])[0].items == ["x"]     # a kept sender goes on
