"""Which blocks could replay exactly (checkpoint.replayable), on real job graphs (pure)."""
import segflow
from segflow.checkpoint.replayable import replayable_blocks
from segflow.plan.compact import compact
from segflow.plan.placement import Worker, plan


def execution(build, workers=2, deterministic=True):
    env = segflow.StreamEnvironment(parallelism=workers, planning_only=True)
    if deterministic:
        env.declare_deterministic()
    build(env).collect()
    compact(env.graph)         # as the coordinator's and the workers' build of a job does
    return plan(env.graph, [Worker(f"w{i}", 1) for i in range(workers)])


def labels(run, blocks):
    return sorted(run.graph.blocks[b].label for b in blocks)


def forward_chain(env):
    return env.generate(lambda i: i, count=10).max_parallelism(2).map(str).max_parallelism(2).map(len)


def test_blocks_fed_replica_to_replica_by_a_deterministic_job_replay_exactly():
    run = execution(forward_chain)
    assert labels(run, replayable_blocks(run)) == ["map(len)", "map(str)"]     # collect: two senders into one


def test_nothing_replays_exactly_without_the_declaration():
    assert replayable_blocks(execution(forward_chain, deterministic=False)) == frozenset()


def test_a_shuffle_from_two_replicas_and_a_join_interleave_their_channels():
    shuffled = execution(lambda env: env.generate(lambda i: i, count=10).shuffle().map(str))
    assert replayable_blocks(shuffled) == frozenset()
    one = execution(lambda env: env.generate(lambda i: i, count=10).shuffle().map(str), workers=1)
    assert labels(one, replayable_blocks(one)) == ["collect", "map(str)"]     # one sender replica each

    def joined(env):
        left = env.generate(lambda i: (i % 3, i), count=10)
        right = env.generate(lambda i: (i % 3, -i), count=10)
        return left.join(right, lambda x: x[0], lambda y: y[0]).drop_key().max_parallelism(2).map(str)
    run = execution(joined)
    join = next(b.id for b in run.graph.blocks if len(run.graph.inputs_of(b.id)) == 2)
    assert join not in replayable_blocks(run)
