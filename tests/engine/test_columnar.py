"""The columnar path: ``read_csv(columnar=True)``, ``map_batches``, ``filter_batches`` and
``group_by_aggregate``, checked against plain Python over the same file (the csv module,
dicts), not against Arrow."""
import csv
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from support.pipelines import run

from segflow import StreamEnvironment
from segflow.errors import JobFailed, PipelineError
from segflow.runtime.operators import columnar
from segflow.runtime.operators.columnar import CsvColumns, csv_record_batches


@pytest.fixture
def bids(tmp_path):
    """A CSV of 20,000 bids (some prices empty) and its rows as the csv module reads them."""
    rng = random.Random(5)
    rows = [(rng.randrange(40), rng.randrange(9), "" if rng.random() < 0.01 else rng.randrange(1, 5000),
             rng.choice(["a", "b", "c, quoted"])) for _ in range(20_000)]
    path = tmp_path / "bids.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["auction", "bidder", "price", "channel"])
        out.writerows(rows)
    with open(path, newline="", encoding="utf-8") as f:
        return str(path), list(csv.DictReader(f))


def oracle(rows, keep=lambda price: price > 100):
    """Per auction: bids (non-null prices kept), the sum of price * 908, min, max, mean."""
    out = {}
    for row in rows:
        if row["price"] == "" or not keep(int(row["price"])):
            continue
        price = int(row["price"])
        entry = out.setdefault(int(row["auction"]), [0, 0, price, price])
        entry[0] += 1
        entry[1] += price * 908
        entry[2], entry[3] = min(entry[2], price), max(entry[3], price)
    return {k: {"bids": n, "cents": s, "lo": lo, "hi": hi, "avg": s / 908 / n} for k, (n, s, lo, hi) in out.items()}


def pipeline(path, chunk=1 << 20):
    def build(env):
        return (env.read_csv(path, columnar=True, batch_bytes=chunk)
                .filter_batches(lambda b: pc.greater(b["price"], 100))
                .map_batches(lambda b: b.append_column("cents", pc.multiply(b["price"], 908)))
                .group_by_aggregate("auction", bids=("price", "count"), cents=("cents", "sum"),
                                    lo=("price", "min"), hi=("price", "max"), avg=("cents", "mean")))
    return build


def exact(records):
    """Means divided by 908 again, rounded: float sums may differ in the last bit."""
    return {k: {**v, "avg": round(v["avg"] / 908, 6)} for k, v in records}


def test_aggregate_equals_plain_python(bids, parallelism):
    path, rows = bids
    expected = {k: {**v, "avg": round(v["avg"], 6)} for k, v in oracle(rows).items()}
    assert exact(run(pipeline(path), parallelism)) == expected


@pytest.mark.parametrize("replicas", [1, 2, 5])
def test_small_regions_read_every_row_once(bids, replicas):
    """Regions of 4 KB: every row of the file, in many batches, once, whatever the replicas."""
    path, rows = bids
    columns = CsvColumns.of(path, ",", True, None)
    batches = [b for index in range(replicas) for b in csv_record_batches(path, columns, index, replicas, 4096)]
    assert len(batches) > 20
    got = [row for b in batches for row in b.to_pylist()]
    assert [(r["auction"], r["channel"]) for r in got] == [(int(r["auction"]), r["channel"]) for r in rows]
    assert [r["price"] for r in got] == [int(r["price"]) if r["price"] else None for r in rows]
    assert exact(run(pipeline(path, 4096), 3)) == {k: {**v, "avg": round(v["avg"], 6)}
                                                   for k, v in oracle(rows).items()}


def test_keys_of_several_columns_are_tuples_and_types_can_be_given(bids):
    path, rows = bids
    got = dict(run(lambda env: env.read_csv(path, columnar=True, types={"bidder": pa.string()})
                   .group_by_aggregate(["auction", "bidder"], n=("channel", "count")), 2))
    expected = {}
    for row in rows:
        key = (int(row["auction"]), row["bidder"])
        expected[key] = expected.get(key, 0) + 1
    assert got == {k: {"n": n} for k, n in expected.items()}


def test_a_file_without_headers_has_columns_f0_f1(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("1,x\n2,y\n1,z\n\n3,x\n", encoding="utf-8")
    got = run(lambda env: env.read_csv(str(path), has_headers=False, columnar=True)
              .group_by_aggregate("f1", total=("f0", "sum")), 2)
    assert sorted(got) == [("x", {"total": 4}), ("y", {"total": 2}), ("z", {"total": 1})]


def test_an_empty_file_or_a_header_alone_gives_nothing(tmp_path):
    for name, text in (("empty.csv", ""), ("header.csv", "a,b\n")):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        def aggregate(env):
            return env.read_csv(str(path), columnar=True).group_by_aggregate("a", n=("b", "count"))
        assert run(aggregate, 2) == []


def test_a_bad_value_names_the_file_and_the_lines(tmp_path):
    path = tmp_path / "bad.csv"
    lines = ["n"] + [str(i) for i in range(400_000)]
    lines[350_000] = "oops"           # past the first MB, where the types were inferred
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(JobFailed, match=r"bad\.csv, in the lines from line \d+ on .*oops.*types="):
        run(lambda env: env.read_csv(str(path), columnar=True).group_by_aggregate("n", c=("n", "count")))


def test_wrong_requests_are_refused_before_the_run(bids, tmp_path):
    path, _ = bids
    env = StreamEnvironment()
    stream = env.read_csv(path, columnar=True)
    with pytest.raises(PipelineError, match="function of sum, count, min, max, mean"):
        stream.group_by_aggregate("auction", x=("price", "median"))
    with pytest.raises(PipelineError, match="at least one result"):
        stream.group_by_aggregate("auction")
    with pytest.raises(PipelineError, match="batch_bytes must be an integer >= 1"):
        env.read_csv(path, columnar=True, batch_bytes=0)
    with pytest.raises(PipelineError, match="types are for columnar=True"):
        env.read_csv(path, types={"price": pa.int64()})
    with pytest.raises(JobFailed, match="no column 'nope'"):
        run(lambda e: e.read_csv(path, columnar=True).group_by_aggregate("nope", n=("price", "count")))
    with pytest.raises(JobFailed, match="not an Arrow record batch"):
        run(lambda e: e.from_iterable([1, 2]).group_by_aggregate("a", n=("b", "count")))


def test_local_partials_compact_and_rescale_to_one_replica(bids):
    """Many batches are combined every COMPACT_AFTER; a rescale hands all partials to
    replica 0, and the result is the same."""
    path, rows = bids
    aggregation = columnar.Aggregation.of("auction", {"n": ("price", "count")})
    columns = CsvColumns.of(path, ",", True, None)
    batches = list(csv_record_batches(path, columns, 0, 1, 2048))
    assert len(batches) > columnar.COMPACT_AFTER
    halves = []
    for part in (batches[: len(batches) // 2], batches[len(batches) // 2:]):
        local = columnar.LocalColumnarAggregate(aggregation)
        from segflow.runtime.elements import Batch
        local.process(Batch(part))
        assert len(local.parts) < columnar.COMPACT_AFTER
        halves.append(local.snapshot())
    fresh = columnar.LocalColumnarAggregate(aggregation)
    assert fresh.rescale(halves, 1, 2) == {"partials": None}
    fresh.restore(fresh.rescale(halves, 0, 2))
    counts = {}
    for row in rows:
        if row["price"]:
            counts[int(row["auction"])] = counts.get(int(row["auction"]), 0) + 1
    assert dict(fresh.on_end().items) == {k: (n,) for k, n in counts.items()}
