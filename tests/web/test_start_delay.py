"""A checkpoint's start and acknowledgement delays per block (Flink's "start delay" and
"end to end duration"): from the coordinator's ask to the first barrier at the block, and to
the block's acknowledgement, on a real run of worker processes."""
import json
import textwrap
import urllib.request

from support.processes import wait_for

JOB = textwrap.dedent('''
    import time

    from segflow import BatchMode


    def slow(x):
        time.sleep(0.002)
        return x


    def build(env, output):
        stream = env.generate(lambda i: i, count=100_000, rate=400).batch_mode(BatchMode.adaptive(16, 0.005))
        stream.shuffle().map(slow).shuffle().map(str).write_text(output)
''')


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return reply.read().decode()


def _checkpointed(job_run, tmp_path, source: str):
    """The job ``source`` on worker processes, an aligned checkpoint every 0.2 s."""
    job = tmp_path / "job.py"
    job.write_text(source)
    return job_run(str(job), "-p", f"output={tmp_path / 'out'}", "--processes", "--checkpoint-protocol",
                   "aligned", "--checkpoint-interval", "0.2", "--state", f"file://{tmp_path / 'state'}")


def test_each_block_reports_when_the_barrier_reached_it(job_run, tmp_path):
    process, web = _checkpointed(job_run, tmp_path, JOB)

    def delays():
        blocks = json.loads(_get(f"{web}api/job"))["blocks"]
        found = [(b["checkpoint_start_delay_ms"], b["checkpoint_ack_delay_ms"]) for b in blocks]
        return found if all(None not in pair for pair in found) else None
    found = wait_for(delays, timeout=30, every=0.2)
    assert found, "no complete checkpoint with a start and an ack delay for every block"
    chain = [start for start, _ in found]
    assert len(chain) == 3 and all(d >= 0 for d in chain), chain
    # one replica per block, one round: a barrier reaches a block only after the block before it
    assert chain[0] <= chain[1] <= chain[2] and chain[0] < chain[2], chain
    # a block acknowledges after its barrier came (the ack at the coordinator's clock, the
    # barrier at the worker's: the same host's here) and after its snapshot was written
    assert all(ack >= start for start, ack in found), found
    assert process.poll() is None, "the job ended before the checkpoints could be looked at: raise count"

    metrics = _get(f"{web}metrics")
    for name in ("segflow_checkpoint_start_delay_seconds", "segflow_checkpoint_ack_delay_seconds"):
        reported = {line.split('block="')[1].split('"')[0] for line in metrics.splitlines()
                    if line.startswith(name + "{")}
        assert reported == {"0", "1", "2"}, (name, metrics)


STATEFUL = textwrap.dedent('''
    from segflow import BatchMode


    def build(env, output):
        stream = env.generate(lambda i: i, count=600_000, rate=40_000).batch_mode(BatchMode.adaptive(256, 0.005))
        stream.shuffle().map(lambda i: i * 3).group_by_count(lambda i: i).drop_key().map(str).write_text(output)
''')


def test_each_block_reports_its_time_on_barriers_and_a_large_state_takes_longest(job_run, tmp_path):
    """The per-node barrier time of Shen, Segment Backup. The count's pre-aggregate
    (chained after the map) keeps a partial per record seen until the end (100,000 and
    more when looked at), and snapshotting it takes far longer than the source's position
    or the final count (which gets the partials only at the end)."""
    process, web = _checkpointed(job_run, tmp_path, STATEFUL)

    def barrier_times():
        job_view = json.loads(_get(f"{web}api/job"))
        times = {b["operators"]: b["barrier_seconds"] for b in job_view["blocks"]}
        seen = max(b["records_in"] for b in job_view["blocks"] if "pre-aggregate" in b["operators"])
        return times if len(job_view["checkpoints"]) >= 4 and seen >= 100_000 else None
    times = wait_for(barrier_times, timeout=40, every=0.3)
    assert times, "fewer than four checkpoints, or fewer than 100,000 records counted"
    assert process.poll() is None, "the job ended before its barrier times could be looked at: raise count"
    assert len(times) == 3 and all(seconds > 0 for seconds in times.values()), times
    large = next(seconds for operators, seconds in times.items() if "pre-aggregate" in operators)
    assert large > 5 * max(seconds for operators, seconds in times.items() if "pre-aggregate" not in operators), times
