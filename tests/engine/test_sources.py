"""Sources: a Python iterator (one replica), a parallel iterator (one per replica), text
and CSV files split by byte ranges, and the deterministic, rate-limited generator."""
import csv
import json
import math
import statistics
import time

import pytest
from support.pipelines import bag, run
from hypothesis import given, settings, strategies as st

import segflow.runtime.operators.sources as sources
from segflow.runtime.operators.sources import BadInputLine, LineReader, plain_lines, split_rows


def lines_of(text):
    """What a text source must read: the lines split at ``\\n`` (without a final empty
    one), a line ended by CRLF without its CR (a last line with no newline keeps it)."""
    lines = text.split("\n")
    last = lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines + [last] if last else lines


def test_an_iterator_is_read_in_order_by_one_replica(parallelism):
    """from_iterable is not parallel: the chain after it keeps one replica, so the order
    of the records survives up to collect at any parallelism."""
    data = [(i * 7919) % 1000 for i in range(2500)]
    assert run(lambda env: env.from_iterable(data).map(lambda x: x + 1), parallelism) == [x + 1 for x in data]
    assert run(lambda env: env.from_iterable(iter(data)), parallelism) == data   # a one-shot iterator too


def test_a_parallel_iterator_runs_once_per_replica(parallelism):
    assert sorted(run(lambda env: env.from_parallel(lambda i, n: [(i, n)]), parallelism)) == \
        [(i, parallelism) for i in range(parallelism)]
    assert bag(run(lambda env: env.from_parallel(lambda i, n: range(i, 1000, n)), parallelism)) == bag(range(1000))
    assert run(lambda env: env.from_parallel(lambda i, n: []), parallelism) == []


@pytest.mark.parametrize("content", [
    b"", b"\n", b"a", b"a\n", b"\n\n\n", b"ab\ncd\n\nef", b"one\r\ntwo\r\n", b"x\r\ny",
    b"a\r\r\nb\r", b"\r\n\r\n", b"x\r", b"a\rb\r\nc\r\r", b"\r", b"\r\r\n",
    "é\nüü✓\n\nñ".encode(), b"first line\n" + b"x" * 40 + b"\nlast",
], ids=repr)
def test_every_line_is_read_once_whichever_byte_splits_the_file(tmp_path, content):
    """Two readers that meet at byte k read every line once, whatever k is: at a newline,
    just after one, inside a CRLF, inside a multi-byte character."""
    path = tmp_path / "in.txt"
    path.write_bytes(content)
    expected = lines_of(content.decode())

    def read(start, end):
        return [line for _, _, lines in LineReader(str(path), start, end).chunks() for line in lines]
    for k in range(len(content) + 1):
        assert read(0, k) + read(k, len(content)) == expected, f"split at byte {k}"


@pytest.mark.parametrize("parallelism", [1, 2, 3, 5, 8])
def test_text_files_split_by_byte_ranges_lose_and_repeat_no_line(tmp_path, parallelism):
    lines = ["", "a", "bb bb", "ünïcødé ✓", "x" * 300] + [f"line {i}" * (i % 4) for i in range(50)] + ["", "last"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines), encoding="utf-8")            # no final newline
    assert bag(run(lambda env: env.read_text(str(path)), parallelism)) == bag(lines)
    path.write_text("\r\n".join(["one", "two"]) + "\r\n", encoding="utf-8")
    assert sorted(run(lambda env: env.read_text(path), parallelism)) == ["one", "two"]


def test_an_empty_file_and_more_replicas_than_lines(tmp_path, parallelism):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert run(lambda env: env.read_text(str(empty)), parallelism) == []
    short = tmp_path / "short.txt"
    short.write_text("only\n", encoding="utf-8")
    assert run(lambda env: env.read_text(str(short)), parallelism) == ["only"]


def write_rows(path, rows, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)


def test_csv_with_a_header_gives_dicts_and_reads_the_header_once(tmp_path, parallelism):
    path = tmp_path / "rows.csv"
    rows = [[f"n{i}", str(i * 3), "with, comma" if i % 5 == 0 else 'a "quote"'] for i in range(80)]
    write_rows(path, [["name", "value", "note"]] + rows)
    got = run(lambda env: env.read_csv(str(path)), parallelism)
    assert bag(tuple(sorted(r.items())) for r in got) == \
        bag(tuple(sorted({"name": n, "value": v, "note": t}.items())) for n, v, t in rows)


def test_csv_without_header_and_with_another_delimiter(tmp_path, parallelism):
    path = tmp_path / "rows.csv"
    rows = [[str(i), f"v;{i}" if i % 3 == 0 else f"v{i}"] for i in range(50)]
    write_rows(path, rows, delimiter=";")
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n")                                              # a blank line is no row
    got = run(lambda env: env.read_csv(str(path), delimiter=";", has_headers=False), parallelism)
    assert bag(map(tuple, got)) == bag(map(tuple, rows))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet='ab ,;\t"\r\n\x00é', max_size=12), min_size=1, max_size=6),
       st.sampled_from([",", ";", "\t", ";;"]))
def test_plain_lines_are_those_the_csv_module_splits_as_str_split_does(lines, delimiter):
    """The fast path splits only what csv.reader would split the same way."""
    if plain_lines(lines, delimiter):
        assert list(split_rows(lines, delimiter)) == list(csv.reader(lines, delimiter=delimiter))


def test_plain_lines_take_plain_lines_and_leave_quoted_ones_to_the_csv_module():
    assert plain_lines(["1,2,x", "3,,y "], ",")
    assert list(split_rows(["1,2,x", "3,,y "], ",")) == [["1", "2", "x"], ["3", "", "y "]]
    for line in ['1,"2,3"', "1,2\r", "1,\n2", "1,\x002", "1" * (csv.field_size_limit() + 1)]:
        assert not plain_lines(["1,2", line], ","), line
    assert not plain_lines(["1,2", ""], ",")
    assert not plain_lines(["1;;2"], ";;")


def test_csv_rows_mostly_plain_and_some_quoted_read_as_the_csv_module_reads_them(tmp_path, parallelism):
    """Batches of plain lines take the fast path, batches with a quoted field the csv
    module: every row comes out as csv.DictReader gives it."""
    path = tmp_path / "bids.csv"
    rows = [[str(i % 97), f"bidder {i}", '"high", bid' if i % 1500 == 7 else str(i * 7)] for i in range(5000)]
    write_rows(path, [["auction", "bidder", "price"]] + rows)
    got = run(lambda env: env.read_csv(str(path)), parallelism)
    with open(path, newline="", encoding="utf-8") as f:
        expected = list(csv.DictReader(f))
    assert bag(tuple(sorted(r.items())) for r in got) == bag(tuple(sorted(r.items())) for r in expected)


def test_the_generator_gives_the_same_records_at_any_parallelism(parallelism):
    assert bag(run(lambda env: env.generate(lambda i: i * i, count=500), parallelism)) == bag(i * i for i in range(500))
    assert bag(run(lambda env: env.generate(str, count=2), parallelism)) == bag(["0", "1"])
    assert run(lambda env: env.generate(str, count=0), parallelism) == []


@pytest.mark.parametrize("parallelism", [1, 3])
def test_the_generator_rate_is_for_the_whole_source(parallelism):
    """60 records at 100 records/s take at least 0.5 s however many replicas share them."""
    started = time.monotonic()
    got = run(lambda env: env.generate(str, count=60, rate=100), parallelism)
    elapsed = time.monotonic() - started
    assert sorted(got, key=int) == [str(i) for i in range(60)]
    assert 0.5 <= elapsed < 5


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_poisson_generator_gives_every_record_at_its_mean_rate(parallelism):
    started = time.monotonic()
    got = run(lambda env: env.generate(str, count=300, rate=400, arrivals="poisson"), parallelism)
    elapsed = time.monotonic() - started
    assert sorted(got, key=int) == [str(i) for i in range(300)]
    assert 0.4 <= elapsed < 5, elapsed


class FakeClock:
    """Stands for the time module in the sources' module: sleeping moves the clock."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now

    def time(self):
        return 1.7e9 + self.now

    def sleep(self, seconds):
        self.now += seconds


def arrival_gaps(monkeypatch, arrivals, seconds=30.0, rate=100.0):
    """The gaps between the records a paced source lets go, polled every millisecond."""
    clock = FakeClock()
    monkeypatch.setattr(sources, "time", clock)
    pace, produced, times = sources.Pace(rate, arrivals=arrivals, seed=7), 0, []
    while clock.now < seconds:
        n = pace.allowance(produced, 1000)
        produced += n
        times += [clock.now] * n
        clock.now += 0.001
    return [b - a for a, b in zip(times, times[1:])]


def test_poisson_arrivals_have_exponential_gaps_and_steady_ones_even_gaps(monkeypatch):
    poisson = arrival_gaps(monkeypatch, "poisson")
    mean = statistics.fmean(poisson)
    assert 0.009 <= mean <= 0.011, mean
    assert 0.9 <= statistics.pstdev(poisson) / mean <= 1.1        # an exponential's spread equals its mean
    assert sum(g < 0.005 for g in poisson) / len(poisson) == pytest.approx(1 - math.exp(-0.5), abs=0.04)
    steady = arrival_gaps(monkeypatch, "steady")
    assert statistics.fmean(steady) == pytest.approx(0.01, abs=0.0005)
    assert statistics.pstdev(steady) < 0.001
    assert arrival_gaps(monkeypatch, "poisson") == poisson          # seeded: a run's schedule repeats


JSON_LINES = ['{"id": 1, "tags": ["a"]}', "", '  ', "[2, 3]", '"four"', "5.5", "null", '{"nested": {"x": "é"}}']


@pytest.mark.parametrize("parallelism", [1, 2, 3, 5])
def test_json_lines_give_one_value_per_line_and_skip_blank_lines(tmp_path, parallelism):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(JSON_LINES * 30) + "\n", encoding="utf-8")
    got = run(lambda env: env.read_jsonl(str(path)), parallelism)
    want = [json.loads(line) for line in JSON_LINES * 30 if line.strip()]
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want))


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_bad_json_line_names_the_file_and_its_line_number(tmp_path, parallelism):
    path = tmp_path / "in.jsonl"
    lines = ['{"n": %d}' % i for i in range(400)]
    lines[287] = '{"n": 287,}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BadInputLine, match=rf"{path} line 288: not JSON .*\{{\"n\": 287,\}}") as caught:
        run(lambda env: env.read_jsonl(str(path)), parallelism)
    assert caught.value.line == 288


def test_a_bad_csv_line_names_the_file_and_its_line_number(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,2\n3,4\n5," + "6" * (csv.field_size_limit() + 1) + "\n7,8\n", encoding="utf-8")
    with pytest.raises(BadInputLine, match=rf"{path} line 4: not CSV") as caught:
        run(lambda env: env.read_csv(str(path)))
    assert caught.value.line == 4


def test_csv_rows_with_more_or_fewer_fields_than_the_header_keep_the_fields_they_have(tmp_path, parallelism):
    path = tmp_path / "ragged.csv"
    rows = [[str(i)] * (1 + i % 5) for i in range(3000)]        # 1 to 5 fields under a 3-field header
    write_rows(path, [["a", "b", "c"]] + rows)
    got = run(lambda env: env.read_csv(str(path)), parallelism)
    assert bag(tuple(sorted(r.items())) for r in got) == \
        bag(tuple(sorted(dict(zip("abc", row)).items())) for row in rows)
