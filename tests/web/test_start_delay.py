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


def test_each_block_reports_when_the_barrier_reached_it(job_run, tmp_path):
    job = tmp_path / "chain.py"
    job.write_text(JOB)
    process, web = job_run(str(job), "-p", f"output={tmp_path / 'out'}", "--processes",
                           "--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.2",
                           "--state", f"file://{tmp_path / 'state'}")

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
