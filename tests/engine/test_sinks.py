"""Sinks: collect (back to the caller), for_each (in the replicas), and text, CSV and
JSON-lines part files, one per replica."""
import csv
import json
import os
import threading

import pytest
from support.pipelines import bag, run

import segflow
from segflow import BatchMode


def test_several_collects_in_one_job(parallelism):
    def build(env):
        evens, odds, nothing = env.from_iterable(range(30)).split(3)
        return [evens.filter(lambda x: x % 2 == 0), odds.filter(lambda x: x % 2), nothing.filter(lambda x: False)]
    evens, odds, nothing = run(build, parallelism)
    assert (sorted(evens), sorted(odds), nothing) == (list(range(0, 30, 2)), list(range(1, 30, 2)), [])


def test_for_each_runs_in_every_replica_and_sees_every_record(parallelism):
    """Records spread by a shuffle are handled by all the replicas of the sink's block;
    on a keyed stream the function gets the (key, value) record."""
    seen, threads, pairs = [], set(), []

    def remember(x):
        seen.append(x)
        threads.add(threading.current_thread().name)
    env = segflow.StreamEnvironment(parallelism=parallelism)
    env.from_iterable(range(300)).batch_mode(BatchMode.fixed(10)).shuffle().for_each(remember)
    env.from_iterable("abcab").group_by(lambda c: c).for_each(pairs.append)
    env.execute()
    assert sorted(seen) == list(range(300))
    assert len({name for name in threads}) == parallelism
    assert bag(pairs) == bag((c, c) for c in "abcab")


def read_parts(directory, parallelism, suffix):
    """The part files' lines, after checking there is exactly one part per replica and
    the output is marked complete."""
    names = sorted(os.listdir(directory))
    assert names == ["_SUCCESS"] + [f"part-{i:05d}{suffix}" for i in range(parallelism)]
    names.remove("_SUCCESS")
    return [line for name in names
            for line in open(os.path.join(directory, name), encoding="utf-8").read().splitlines()]


RECORDS = [(i, f"v{i}", i / 4) for i in range(100)]
FORMATS = {
    # fmt: (write with the default formatter, write with a formatter, parse a line back, suffix)
    "text": (lambda s, d: s.write_text(d), lambda s, d: s.write_text(d, lambda r: f"{r[0]}|{r[1]}"),
             lambda line: line, ".txt"),
    "csv": (lambda s, d: s.write_csv(d), lambda s, d: s.write_csv(d, lambda r: [r[1], r[0]], delimiter=";"),
            lambda line: tuple(next(csv.reader([line], delimiter=";" if ";" in line else ","))), ".csv"),
    "jsonl": (lambda s, d: s.write_jsonl(d), lambda s, d: s.write_jsonl(d, lambda r: {"k": r[0]}),
              lambda line: json.loads(line), ".jsonl"),
}
EXPECTED = {
    "text": ([str(r) for r in RECORDS], [f"{r[0]}|{r[1]}" for r in RECORDS]),
    "csv": ([(str(a), b, str(c)) for a, b, c in RECORDS], [(b, str(a)) for a, b, _ in RECORDS]),
    "jsonl": ([[a, b, c] for a, b, c in RECORDS], [{"k": a} for a, _, _ in RECORDS]),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_sinks_write_one_part_per_replica(tmp_path, parallelism, fmt):
    plain, formatted, parse, suffix = FORMATS[fmt]
    env = segflow.StreamEnvironment(parallelism=parallelism)
    a, b = env.from_iterable(RECORDS).shuffle().split(2)
    plain(a, str(tmp_path / "plain"))
    formatted(b, str(tmp_path / "formatted"))
    env.execute()
    for directory, expected in zip(("plain", "formatted"), EXPECTED[fmt]):
        lines = read_parts(tmp_path / directory, parallelism, suffix)
        assert sorted(map(parse, lines), key=repr) == sorted(expected, key=repr), directory


def test_an_empty_stream_still_writes_one_empty_part_per_replica(tmp_path, parallelism):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    env.from_iterable([]).shuffle().write_text(str(tmp_path / "out"))
    env.execute()
    assert read_parts(tmp_path / "out", parallelism, ".txt") == []


def test_a_new_run_replaces_the_parts_of_an_earlier_one(tmp_path):
    out = tmp_path / "out"
    for parallelism, n in ((4, 40), (2, 10)):
        env = segflow.StreamEnvironment(parallelism=parallelism)
        env.from_iterable(range(n)).shuffle().write_text(str(out))
        env.execute()
    assert sorted(int(line) for line in read_parts(out, 2, ".txt")) == list(range(10))
