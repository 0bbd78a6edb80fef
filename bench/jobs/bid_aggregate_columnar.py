"""bid_aggregate.py on the columnar path: the CSV read as Arrow record batches, the euro
cents computed by Arrow's kernels, count and sum per auction by Arrow's hash aggregation."""
import pyarrow.compute as pc


def with_cents(batch):
    return batch.append_column("cents", pc.divide(pc.multiply(batch["price"], 908), 1000))


def build(env, input):
    return (env.read_csv(input, columnar=True)
            .map_batches(with_cents)
            .group_by_aggregate("auction", n=("price", "count"), cents=("cents", "sum"))
            .collect())
