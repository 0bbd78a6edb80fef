"""Sources (iterator, parallel, text by byte ranges, CSV, rate-limited generator) and sinks
(collect, for_each, text/CSV/JSON-lines part files per replica)."""
import csv
import glob
import json
import os
import time

import pytest
from conftest import bag, run

import segflow


@pytest.mark.parametrize("parallelism", [1, 2, 3, 5, 8])
def test_text_files_split_by_byte_ranges_lose_and_repeat_no_line(tmp_path, parallelism):
    lines = ["", "a", "bb bb", "ünïcødé ✓", "x" * 300] + [f"line {i}" for i in range(50)] + ["", "last"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines), encoding="utf-8")            # no final newline
    assert bag(run(lambda env: env.read_text(str(path)), parallelism)) == bag(lines)
    path.write_text("\r\n".join(["one", "two"]) + "\r\n", encoding="utf-8")
    assert sorted(run(lambda env: env.read_text(str(path)), parallelism)) == ["one", "two"]


def test_csv_with_and_without_headers(tmp_path, parallelism):
    path = tmp_path / "rows.csv"
    rows = [{"name": f"n{i}", "value": str(i * 3)} for i in range(60)]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, ["name", "value"])
        writer.writeheader()
        writer.writerows(rows)
    assert bag(tuple(sorted(r.items())) for r in run(lambda env: env.read_csv(str(path)), parallelism)) == \
        bag(tuple(sorted(r.items())) for r in rows)
    plain = run(lambda env: env.read_csv(str(path), has_headers=False), parallelism)
    assert bag(map(tuple, plain)) == bag([("name", "value")] + [(r["name"], r["value"]) for r in rows])


def test_parallel_iterator_and_generator(parallelism):
    assert bag(run(lambda env: env.from_parallel(lambda i, n: range(i, 100, n)), parallelism)) == bag(range(100))
    assert bag(run(lambda env: env.generate(lambda i: i * i, count=500), parallelism)) == \
        bag(i * i for i in range(500))


def test_the_generator_is_rate_limited():
    started = time.monotonic()
    assert sorted(run(lambda env: env.generate(str, count=60, rate=100), 2)) == sorted(map(str, range(60)))
    assert time.monotonic() - started >= 0.5


def test_for_each_sees_every_record(tmp_path, parallelism):
    directory = tmp_path / "seen"
    directory.mkdir()

    def remember(x):
        with open(directory / f"{os.getpid()}-{x}", "w"):
            pass
    env = segflow.StreamEnvironment(parallelism=parallelism)
    env.from_iterable(range(40)).shuffle().for_each(remember)
    env.execute()
    assert sorted(int(n.split("-")[1]) for n in os.listdir(directory)) == list(range(40))


@pytest.mark.parametrize("fmt", ["text", "csv", "jsonl"])
def test_file_sinks_write_one_part_per_replica(tmp_path, parallelism, fmt):
    out = tmp_path / "out"
    records = [(i, f"v{i}") for i in range(100)]
    env = segflow.StreamEnvironment(parallelism=parallelism)
    stream = env.from_iterable(records).shuffle()
    {"text": lambda: stream.write_text(str(out), lambda r: f"{r[0]}:{r[1]}"),
     "csv": lambda: stream.write_csv(str(out)),
     "jsonl": lambda: stream.write_jsonl(str(out), lambda r: {"k": r[0], "v": r[1]})}[fmt]()
    env.execute()
    parts = sorted(glob.glob(str(out / "part-*")))
    assert [os.path.basename(p) for p in parts] == \
        [f"part-{i:05d}.{ {'text': 'txt'}.get(fmt, fmt) }" for i in range(parallelism)]
    lines = [line for p in parts for line in open(p, encoding="utf-8").read().splitlines()]
    parse = {"text": lambda l: tuple(l.split(":")), "csv": lambda l: tuple(next(csv.reader([l]))),
             "jsonl": lambda l: (str(json.loads(l)["k"]), json.loads(l)["v"])}[fmt]
    assert bag(map(parse, lines)) == bag((str(i), v) for i, v in records)


def test_a_new_run_replaces_the_parts_of_an_earlier_one(tmp_path):
    out = tmp_path / "out"
    for parallelism, n in ((4, 40), (2, 10)):
        env = segflow.StreamEnvironment(parallelism=parallelism)
        env.from_iterable(range(n)).shuffle().write_text(str(out))
        env.execute()
    names = sorted(os.listdir(out))
    assert names == ["part-00000.txt", "part-00001.txt"]
    assert sorted(int(l) for n in names for l in open(out / n).read().split()) == list(range(10))
