"""A replica restored at another parallelism starts its inputs afresh, except for the
channels of senders that had finished before the snapshot: they will send nothing more,
no end, no watermark and no barrier, so they must count as ended, terminated and not
waited for (waiting for them hung a rescaled join whose static side had ended)."""
from segflow.runtime.inputs import InputStage, InputState
from segflow.runtime.rescale import finished_after_rescale


def two_inputs() -> InputStage:
    """Input 0 from three senders, input 1 from two."""
    return InputStage([InputState([0, 1, 2], replay=False, feedback=False),
                       InputState([0, 1], replay=False, feedback=False)])


def test_a_closed_channel_counts_as_ended_and_terminated():
    stage = two_inputs()
    stage.close_finished({(0, 0), (0, 2), (1, 0), (1, 1)})
    assert stage.ended(0) is True              # sender 1, the only live one, ends
    assert stage.terminated(0) is True


def test_the_frontier_follows_the_live_senders_only():
    stage = two_inputs()
    stage.close_finished({(0, 0), (0, 2), (1, 1)})
    assert stage.watermark(0, 1, 40) is None   # input 1's sender 0 has said nothing yet
    assert stage.watermark(1, 0, 30) == 30
    assert stage.watermark(1, 0, 50) == 40


def test_without_closed_channels_every_sender_is_waited_for():
    stage = two_inputs()
    assert stage.watermark(0, 1, 40) is None
    assert stage.watermark(1, 0, 30) is None
    assert not stage.ended(0) and not stage.terminated(0)


def test_a_new_replica_is_finished_only_when_every_old_one_was():
    assert finished_after_rescale([True, True, True], same_count=False, index=1) is True
    assert finished_after_rescale([True, False, True], same_count=False, index=0) is False
    assert finished_after_rescale([True, False, True], same_count=True, index=0) is True
    assert finished_after_rescale([True, False, True], same_count=True, index=1) is False
