"""Choosing connectors and a barrier interval with the cost model (pure), and the
``segflow plan --segment-backup`` command over a real calibration run."""
import subprocess
import sys

import pytest

from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.segment_choice import EXHAUSTIVE, choose, evaluate
from segflow.checkpoint.segment_cost import Delays, Pipeline, Prices
from segflow.checkpoint.segment_cost_dag import from_pipeline
from segflow.state import open_backend
from support.processes import ROOT

DELAYS = Delays(edge=0.001, transmit=0.0005, read=0.002, write=0.0001, normal=0.01, barrier=0.001, ack=0.001,
                recover_response=1.0, recover_misc=0.1)


def chain(nodes):
    return from_pipeline(Pipeline(service=(1 / 200,) * nodes, ratios=(1.0,) * (nodes - 1),
                                  connectors=frozenset({1, nodes}), block=25, rate=30, tuple_bytes=100,
                                  barrier_bytes=40, checkpoint_bytes=2000, ack_bytes=40))


def test_a_loose_target_takes_the_cheapest_choice():
    choice = choose(chain(7), DELAYS, Prices(), max_recovery_delay=1e6)
    assert choice.connectors == (1, 7) and choice.meets_target
    every = [evaluate(chain(7), DELAYS, Prices(), c, i, 1e6) for c in [(1, 7), (1, 4, 7)] for i in (0.5, 30.0)]
    assert choice.money_per_hour <= min(e.money_per_hour for e in every)


def tight_target(nodes):
    """Half-way between the spout-and-sink choice and every node a connector, at 5 s."""
    loose = evaluate(chain(nodes), DELAYS, Prices(), (1, nodes), 5.0, 1e6).recovery_delay
    fastest = evaluate(chain(nodes), DELAYS, Prices(), range(1, nodes + 1), 5.0, 1e6).recovery_delay
    return (loose + fastest) / 2


def test_a_tight_target_buys_connectors_and_is_met():
    target = tight_target(7)
    tight = choose(chain(7), DELAYS, Prices(), max_recovery_delay=target, intervals=(5.0,))
    assert tight.meets_target and tight.recovery_delay <= target
    assert len(tight.connectors) > 2
    assert evaluate(chain(7), DELAYS, Prices(), tight.connectors, tight.interval, target) == tight
    cheaper = [evaluate(chain(7), DELAYS, Prices(), (1, *c, 7), 5.0, target) for c in [(), (4,), (3,), (5,)]]
    assert all(c.money_per_hour >= tight.money_per_hour or not c.meets_target for c in cheaper)


def test_an_unreachable_target_returns_the_fastest_and_says_so():
    choice = choose(chain(7), DELAYS, Prices(), max_recovery_delay=0.01)
    assert not choice.meets_target
    assert choice.recovery_delay == min(evaluate(chain(7), DELAYS, Prices(), c, i, 0.01).recovery_delay
                                        for c in [(1, 2, 3, 4, 5, 6, 7)] for i in (0.5,))


def test_long_pipelines_are_searched_greedily_and_still_meet_the_target():
    nodes = EXHAUSTIVE + 6
    tight = choose(chain(nodes), DELAYS, Prices(), max_recovery_delay=tight_target(nodes), intervals=(5.0,))
    assert tight.meets_target and 2 < len(tight.connectors) < nodes


def run_plan(*args):
    return subprocess.run([sys.executable, "-m", "segflow.cli.main", "plan", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_plan_calibrates_a_linear_job_and_prints_the_choice(tmp_path):
    result = run_plan("tests/recovery/jobs/segment_shapes.py", "-p", f"output={tmp_path}/out", "-p", "shape=linear",
                      "-p", "events=100000", "-p", "rate=20000", "--segment-backup", "--calibrate", "1.5",
                      "--state", f"file://{tmp_path}/state")
    assert result.returncode == 0, result.stderr
    assert "calibrated 4 blocks" in result.stdout and "predicted recovery delay" in result.stdout
    assert "run with: --checkpoint-protocol segment --connectors " in result.stdout


def test_plan_records_the_inputs_it_was_given_beside_those_it_measured(tmp_path):
    state = f"file://{tmp_path}/state"
    result = run_plan("tests/recovery/jobs/segment_shapes.py", "-p", f"output={tmp_path}/out", "-p", "shape=linear",
                      "-p", "events=100000", "-p", "rate=20000", "--segment-backup", "--calibrate", "1",
                      "--restart-seconds", "0.05", "--checkpoint-seconds", "0.4", "--state", state)
    assert result.returncode == 0, result.stderr
    record = Catalog(open_backend(state), "segment_shapes").segment_choice()
    assert record["given"]["restart_s"] == 0.05 and record["given"]["checkpoint_s"] == 0.4
    # the restart, and a replay of half an interval and 1.5 checkpoints of input (4.2 alone: half an
    # interval), each tuple at the mean service time and the transmit delay, at no less than the slowest
    # channel's rate
    measured = record["measured"]
    per_tuple = sum(measured["service_s"].values()) / len(measured["service_s"]) + record["given"]["edge_s"]
    replay = per_tuple * min(measured["flows"].values()) * (record["interval"] / 2 + 1.5 * 0.4)
    assert record["predicted_recovery_delay_s"] >= 0.05 + 0.1 + replay
    refused = run_plan("tests/recovery/jobs/segment_shapes.py", "-p", f"output={tmp_path}/out2", "-p", "shape=linear",
                       "-p", "events=1000", "--segment-backup", "--calibrate", "0.5", "--checkpoint-seconds", "-1")
    assert refused.returncode != 0 and "a checkpoint's duration >= 0" in refused.stderr


@pytest.mark.parametrize("shape, paths", [("split", 2), ("merge", 2)])
def test_plan_covers_jobs_that_split_and_merge_path_by_path(tmp_path, shape, paths):
    """The model runs per source-to-sink path: the calibration sees every path, and the
    recorded choice names the job's own blocks, sources and sinks among them."""
    state = f"file://{tmp_path}/state"
    result = run_plan("tests/recovery/jobs/segment_shapes.py", "-p", f"output={tmp_path}/out", "-p", f"shape={shape}",
                      "-p", "events=100000", "-p", "rate=20000", "--segment-backup", "--calibrate", "1",
                      "--state", state)
    assert result.returncode == 0, result.stderr
    assert f"({paths} source-to-sink path(s))" in result.stdout and "predicted recovery delay" in result.stdout
    record = Catalog(open_backend(state), "segment_shapes").segment_choice()
    channels = [tuple(map(int, c.split(">"))) for c in record["measured"]["flows"]]
    senders, receivers = {u for u, _ in channels}, {v for _, v in channels}
    sources, sinks = senders - receivers, receivers - senders
    assert sources and sinks and sources | sinks <= set(record["connectors"])
    assert len(channels) >= 3


def test_auto_connectors_use_the_recorded_choice_for_the_same_pipeline_only(tmp_path):
    """plan --segment-backup --state records its choice; segflow run --connectors auto
    (the default) takes it for the pipeline it was made for, and says so; a changed
    pipeline gets the rule, with the reason."""
    state = f"file://{tmp_path}/state"
    job = ["tests/recovery/jobs/segment_shapes.py", "-p", f"output={tmp_path}/out", "-p", "events=3000", "-p",
           "rate=20000"]
    planned = run_plan(*job, "-p", "shape=linear", "--segment-backup", "--calibrate", "1", "--state", state)
    assert planned.returncode == 0, planned.stderr
    assert "recorded beside job 'segment_shapes'" in planned.stdout
    chosen = planned.stdout.split("connectors: ")[1].splitlines()[0]
    blocks = sorted(int(b.split()[1]) for b in chosen.split("; ")[0].split(", "))

    def run(shape):
        return subprocess.run([sys.executable, "-m", "segflow.cli.main", "run", *job, "-p", f"shape={shape}",
                               "--parallelism", "2", "--checkpoint-protocol", "segment", "--checkpoint-interval",
                               "0.3", "--state", state], cwd=ROOT, capture_output=True, text=True, timeout=120)
    same = run("linear")
    assert same.returncode == 0, same.stderr[-2000:]
    assert f"connectors {blocks}: the cost model's choice, recorded by segflow plan --segment-backup" in same.stderr
    other = run("split")
    assert other.returncode == 0, other.stderr[-2000:]
    assert "the auto rule (the cost model's recorded choice was made for another pipeline" in other.stderr
