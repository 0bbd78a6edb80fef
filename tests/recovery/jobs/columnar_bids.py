"""The columnar path under kills (tests/recovery/test_kills.py, through slowed_example.py):
a CSV of bids read as Arrow record batches of 2 KB, a filter and a map over whole batches,
count, sum and max per auction, written as text lines."""
import pyarrow.compute as pc


def line(auction, result):
    return f"{auction}\t{result['n']}\t{result['cents']}\t{result['hi']}"


def build(env, input, output):
    (env.read_csv(input, columnar=True, batch_bytes=2048)
        .filter_batches(lambda b: pc.not_equal(b["bidder"], 0))
        .map_batches(lambda b: b.append_column("cents", pc.multiply(b["price"], 908)))
        .group_by_aggregate("auction", n=("price", "count"), cents=("cents", "sum"), hi=("price", "max"))
        .map(line)
        .drop_key()
        .write_text(output))
