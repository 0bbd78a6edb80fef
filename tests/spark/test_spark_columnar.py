"""The columnar path on Spark: the same record batches per source replica, the same
map_batches/filter_batches and the same per-key aggregates as the engine."""
import csv
import random

import pyarrow.compute as pc
import pytest


@pytest.fixture
def bids(tmp_path):
    rng = random.Random(9)
    path = tmp_path / "bids.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["auction", "price"])
        out.writerows((rng.randrange(30), rng.randrange(1, 1000)) for _ in range(50_000))
    return str(path)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_columnar_aggregate_is_the_same_on_spark(same_on_both, bids, parallelism):
    got = same_on_both(lambda env: env.read_csv(bids, columnar=True)
                       .filter_batches(lambda b: pc.greater(b["price"], 500))
                       .map_batches(lambda b: b.append_column("cents", pc.multiply(b["price"], 908)))
                       .group_by_aggregate("auction", n=("price", "count"), cents=("cents", "sum"),
                                           hi=("price", "max"))
                       .collect(), parallelism)
    assert len(got) == 30


def test_record_batches_flow_through_plain_operators_on_spark(same_on_both, bids):
    """A record batch is a record: a map to its row count runs unchanged on Spark."""
    got = same_on_both(lambda env: env.read_csv(bids, columnar=True).map(lambda b: b.num_rows).collect(), 2)
    assert sum(got) == 50_000
