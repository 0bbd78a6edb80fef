"""Exactly once under SIGKILL: jobs run with a checkpointing protocol while the test kills
random workers at random moments; the output must equal the no-failure oracle, record for
record."""
import collections
import os
import random
import signal
import subprocess
import time

import psutil
import pytest

from recovery.jobs.join_families import oracle_lines as join_families_oracle
from support.processes import ROOT, SEGFLOW, is_worker, kill_tree  # noqa: F401 (the other kill tests import it from here)

JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
KILLS = 3


def read_lines(directory):
    lines = []
    for name in sorted(os.listdir(directory)):
        if name.startswith("part-"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                lines.extend(line.rstrip("\n") for line in f)
    return lines


def workers_of(process):
    try:
        return [p for p in psutil.Process(process.pid).children(recursive=True) if is_worker(p)]
    except psutil.NoSuchProcess:
        return []


def run_args(job: str, params: dict, state_url: str, protocol: str, parallelism: int, interval: float,
             extra=()) -> list[str]:
    """``segflow run`` of ``job`` (a file in ``JOBS``) with checkpoints, quiet."""
    args = [SEGFLOW, "run", os.path.join(JOBS, job), "--parallelism", str(parallelism),
            "--checkpoint-protocol", protocol, "--checkpoint-interval", str(interval),
            "--state", state_url, "--quiet", *extra]
    for key, value in params.items():
        args += ["-p", f"{key}={value}"]
    return args


def run_with_kills(job, params, state_url, protocol, seed, parallelism=2, kills=KILLS, interval=0.25,
                   timeout=150, running=None, extra=(), victims=lambda workers: workers):
    """Run ``segflow run`` and SIGKILL a random worker ``kills`` times at random moments
    (once ``running()`` says so, if given: kills during start-up test less), chosen among
    ``victims(workers)``."""
    rng = random.Random(seed)
    args = run_args(job, params, state_url, protocol, parallelism, interval, extra)
    run = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    killed = []
    try:
        deadline = time.monotonic() + timeout
        while running is not None and not running() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        kills_from = time.monotonic() - (deadline - timeout)
        while len(killed) < kills and run.poll() is None and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.6, 1.4))
            candidates = victims(workers_of(run))
            if candidates:
                victim = rng.choice(candidates)
                try:
                    victim.send_signal(signal.SIGKILL)
                    killed.append(victim.pid)
                except psutil.NoSuchProcess:
                    pass
        try:
            _, stderr = run.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_tree(run)
            _, stderr = run.communicate()
            raise AssertionError(f"the job did not finish in {timeout} s after killing {killed}:\n"
                                 f"{stderr[-4000:]}") from None
    finally:
        kill_tree(run)
    assert run.returncode == 0, f"the job failed after killing {killed}:\n{stderr[-3000:]}"
    ran = time.monotonic() - (deadline - timeout)
    assert len(killed) == kills, (f"the job ended before {kills} kills (killed {len(killed)}; kills could start "
                                  f"{kills_from:.1f} s after the start, it ended by {ran:.1f} s): make it longer")
    assert workers_of(run) == []
    return stderr




PROTOCOLS = ["aligned", "unaligned", "uncoordinated", "cic", "segment"]
LOOP_PROTOCOLS = [p for p in PROTOCOLS if p != "segment"]     # segment backup refuses loops


@pytest.fixture
def state_url(tmp_path):
    return f"file://{tmp_path}/state"


def words_file(tmp_path, seed: int, lines: int, vocabulary: int = 300) -> tuple[str, str]:
    """A text of ``lines`` random lines for slow_wordcount.py: (the text, its file)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(vocabulary)]
    text = "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12))) for _ in range(lines))
    source = tmp_path / "in.txt"
    source.write_text(text + "\n", encoding="utf-8")
    return text, str(source)


def assert_word_counts(output, text: str) -> None:
    """slow_wordcount.py's output is the text's word counts, each word once."""
    expected = collections.Counter(text.lower().split())
    rows = [line.split("\t") for line in read_lines(output)]
    assert len(rows) == len(expected)
    assert {w: int(n) for w, n in rows} == dict(expected)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_wordcount_file_to_file(tmp_path, state_url, protocol):
    text, source = words_file(tmp_path, 11, 12000)
    output = tmp_path / "out"
    run_with_kills("slow_wordcount.py", {"input": source, "output": output}, state_url, protocol, seed=1)
    assert_word_counts(output, text)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_keyed_event_time_windows(tmp_path, state_url, protocol):
    output = tmp_path / "out"
    run_with_kills("windowed_counts.py", {"output": output}, state_url, protocol, seed=2)
    expected = collections.Counter()
    for i in range(24000):
        expected[(f"k{(i * 7919) % 13}", i // 100 * 100 + 100)] += 1
    got = collections.Counter(read_lines(output))
    assert got == collections.Counter(f"{k}\t{n}" for (k, _), n in expected.items())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_hash_join(tmp_path, state_url, protocol):
    output = tmp_path / "out"
    run_with_kills("joined.py", {"output": output}, state_url, protocol, seed=3)
    lefts = collections.defaultdict(list)
    for i in range(9000):
        lefts[i % 500].append(f"L{i}")
    expected = [f"{lft}\tR{j}" for j in range(3000) for lft in lefts.get(j % 700, [])]
    assert collections.Counter(read_lines(output)) == collections.Counter(expected)


@pytest.mark.parametrize("protocol", ["aligned", "segment"])
def test_join_and_window_families_that_no_example_runs(tmp_path, state_url, protocol):
    """Interval and window joins, left and outer joins, non-keyed count and session
    windows: three worker kills, every sink equal to plain Python."""
    output = tmp_path / "out"
    run_with_kills("join_families.py", {"output": output}, state_url, protocol, seed=5)
    for sink, lines in join_families_oracle(6000).items():
        assert collections.Counter(read_lines(output / sink)) == lines, sink


@pytest.mark.parametrize("protocol", ["aligned", "unaligned", "segment"])
def test_columnar_aggregate(tmp_path, state_url, protocol):
    """Arrow record batches from a CSV (the source's position is a byte offset), local
    per-key partials in Arrow tables, their merge after the shuffle: three worker kills,
    the output equal to plain Python over the file."""
    rng = random.Random(6)
    bids = [(rng.randrange(60), rng.randrange(5), rng.randrange(1, 10_000)) for _ in range(24_000)]
    source = tmp_path / "bids.csv"
    source.write_text("auction,bidder,price\n" + "".join(f"{a},{b},{p}\n" for a, b, p in bids), encoding="utf-8")
    output = tmp_path / "out"
    job = {"example": os.path.join(JOBS, "columnar_bids.py"), "rate": 14, "input": source, "output": output}
    run_with_kills("slowed_example.py", job, state_url, protocol, seed=6)
    expected = {}
    for auction, bidder, price in bids:
        if bidder:
            n, cents, hi = expected.get(auction, (0, 0, 0))
            expected[auction] = (n + 1, cents + price * 908, max(hi, price))
    assert sorted(read_lines(output)) == sorted(f"{a}\t{n}\t{c}\t{h}" for a, (n, c, h) in expected.items())


@pytest.mark.parametrize("protocol", LOOP_PROTOCOLS)
def test_iteration(tmp_path, state_url, protocol):
    output = tmp_path / "out"
    run_with_kills("iterative.py", {"output": output}, state_url, protocol,
                   seed=int(os.environ.get("SEGFLOW_KILL_SEED", 4)))
    assert sorted(map(int, read_lines(output))) == [x + 30 for x in range(3000)]
    assert read_lines(str(output) + "-state") == [str(3000 * 30)]


@pytest.mark.parametrize("protocol", ["uncoordinated", "cic"])
def test_local_checkpoints_behind_the_stable_line_are_deleted(tmp_path, state_url, protocol):
    """Without failures the stable line follows the checkpoints, so old local checkpoints
    and fully processed log segments leave the store while the job runs (``--retain 1``:
    only the stable line is kept; more lines kept is tested in tests/checkpoint)."""
    output = tmp_path / "out"
    run_with_kills("windowed_counts.py", {"output": output}, state_url, protocol, seed=5, kills=0,
                   extra=("--retain", "1"))
    root = tmp_path / "state" / "jobs" / "windowed_counts" / "unc"
    assert (root / "_STABLE").is_file(), "no stable line was stored for a restart of the whole job"
    for process in sorted(p for p in os.listdir(root) if (root / p).is_dir()):
        names = os.listdir(root / process)
        blobs = sorted(int(n) for n in names if not n.endswith(".log"))
        logs = [n for n in names if n.endswith(".log")]
        assert blobs, process
        assert max(blobs) >= 4, f"{process} took too few local checkpoints for the test: {blobs}"
        assert len(blobs) < max(blobs) and len(logs) < max(blobs), (process, sorted(names))
