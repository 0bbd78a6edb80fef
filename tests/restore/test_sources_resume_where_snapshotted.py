"""Sources resume exactly where their snapshot was taken (no record lost or repeated)."""
import pickle
import random
import time

import pytest

import segflow.runtime.operators.sources as sources
from segflow.runtime.operator import ReplicaContext
from segflow.runtime.operators.sources import (CsvSource, GeneratorSource, IterableSource,
                                               ParallelSource, TextFileSource)


def ctx(index, replicas):
    return ReplicaContext(0, index, replicas, "w0", None, None)


def drain_with_restores(make, replicas, rng, batch=7):
    """Read every replica to the end, replacing the source by a restored copy at random."""
    out = []
    for i in range(replicas):
        src = make()
        src.open(ctx(i, replicas))
        while (b := src.poll(batch)) is not None:
            out.extend(b.items)
            if rng.random() < 0.3:
                state = src.snapshot()
                src = make()
                src.open(ctx(i, replicas))
                src.restore(state)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_text_file_positions(tmp_path, monkeypatch, seed):
    monkeypatch.setattr(sources, "CHUNK", 64)
    rng = random.Random(seed)
    lines = ["".join(rng.choice("ab é\r") for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(0, 150))]
    text = "\n".join(lines) + rng.choice(["", "\n", "\r\n"])
    path = tmp_path / "f.txt"
    path.write_text(text, encoding="utf-8", newline="")
    parts = text.split("\n")
    expected = [lft[:-1] if lft.endswith("\r") else lft for lft in parts[:-1]]
    if text and not text.endswith("\n"):
        expected.append(parts[-1])
    for replicas in (1, 3, 7):
        assert drain_with_restores(lambda: TextFileSource(str(path)), replicas, rng) == expected


def test_csv_positions_keep_the_header_skipped(tmp_path):
    rng = random.Random(5)
    path = tmp_path / "f.csv"
    rows = [{"a": str(i), "b": f"x{i}"} for i in range(100)]
    path.write_text("a,b\n" + "".join(f"{r['a']},{r['b']}\n" for r in rows), encoding="utf-8")
    for replicas in (1, 2, 4):
        got = drain_with_restores(lambda: CsvSource(str(path), ",", True), replicas, rng)
        assert sorted(got, key=lambda r: int(r["a"])) == rows


def test_generator_iterable_and_parallel_positions():
    rng = random.Random(9)
    for replicas in (1, 3):
        got = drain_with_restores(lambda: GeneratorSource(lambda i: i * i, 200, None), replicas, rng)
        assert sorted(got) == [i * i for i in range(200)]
        got = drain_with_restores(lambda: ParallelSource(lambda i, n: range(i, 100, n)), replicas, rng)
        assert sorted(got) == list(range(100))
    assert drain_with_restores(lambda: IterableSource(list("abcdefghijklmnop")), 1, rng) == list("abcdefghijklmnop")


def restored_generator(state: dict, catch_up: bool, replicas: int = 1) -> GeneratorSource:
    """A paced generator (100 records/s over ``replicas``) restored from ``state``, as a
    worker does: restore, then open."""
    src = GeneratorSource(lambda i: i, None, 100.0 * replicas, catch_up=catch_up)
    src.restore(state)
    src.open(ctx(0, replicas))
    return src


@pytest.mark.parametrize("replicas", [1, 2])
def test_a_paced_generator_that_catches_up_produces_what_its_schedule_owed_at_once(replicas):
    down_since = time.time() - 5.0          # its schedule began 5 s ago; 10 records had gone
    state = {"next_index": 10 * replicas, "produced": 10, "since": down_since}
    caught_up = restored_generator(state, catch_up=True, replicas=replicas)
    backlog = caught_up.poll(10_000).items
    assert 485 <= len(backlog) <= 500, len(backlog)        # 5 s at 100/s, less the 10 produced
    assert backlog[:2] == [10 * replicas, 11 * replicas]   # from where the snapshot left off
    assert len(caught_up.poll(10_000).items) <= 2, "the rate no longer holds after the backlog"
    again = restored_generator(pickle.loads(pickle.dumps(caught_up.snapshot())), catch_up=True, replicas=replicas)
    assert len(again.poll(10_000).items) <= 2, "a second restore owed the same backlog again"
    assert abs(caught_up.snapshot()["since"] - down_since) < 0.05


def test_a_paced_generator_resumes_its_schedule_by_default():
    state = {"next_index": 10, "produced": 10, "since": time.time() - 5.0}
    resumed = restored_generator(state, catch_up=False)
    started = time.monotonic()
    got = []
    while time.monotonic() - started < 0.3:
        got.extend(resumed.poll(10_000).items)
    assert 15 <= len(got) <= 40, len(got)                  # 100/s from the restored position
    assert got[0] == 10


def test_a_snapshot_from_before_catch_up_restores_without_a_backlog():
    resumed = restored_generator({"next_index": 10, "produced": 10}, catch_up=True)
    assert len(resumed.poll(10_000).items) <= 2
