"""The streaming half of the lambda example: Nexmark bids as JSON lines, committed per
checkpoint epoch, for the batch stage (daily.py) to aggregate.

    segflow run examples/lambda/stream.py -p output=out/bids --checkpoint-protocol aligned \\
        --state file:///tmp/lambda-state --batch-stage examples/lambda/daily.py:daily --batch-output out/daily

The sink writes a directory or S3 objects. Input: ``events`` events of the deterministic Nexmark generator (segflow.datagen.nexmark), at
most ``rate`` per second, so that checkpoints cut the stream into several epochs. Writes one
``{"auction", "bidder", "price", "date_time"}`` object per bid; ``date_time`` is in
milliseconds since 1970 from START_MILLIS, with the generator's clock sped up
SPEEDUP times, so that a few tens of thousands of events span several days.
"""
from segflow.datagen.nexmark import Bid, event

START_MILLIS = 1_767_225_600_000      # 2026-01-01T00:00:00Z
SPEEDUP = 3600                        # one generator millisecond is an hour: 10 ms per event -> 2400 events a day


def as_row(bid: Bid) -> dict:
    return {"auction": bid.auction, "bidder": bid.bidder, "price": bid.price,
            "date_time": START_MILLIS + bid.date_time * SPEEDUP}


def build(env, output, events="30000", rate="10000"):
    """``output``: a directory, or s3://bucket/prefix (endpoint from $AWS_ENDPOINT_URL)."""
    bids = (env.generate(event, count=int(events), rate=float(rate))
            .filter(lambda e: isinstance(e, Bid))
            .map(as_row))
    bids.write_jsonl(output)
