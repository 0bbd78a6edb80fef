"""The lambda example's oracle: per (auction, day), the bids' count, total and maximum price,
computed in plain Python from the generator; and the same totals read back from the batch
stage's Parquet output, combining the rows of every processed range."""
from __future__ import annotations

import collections
import datetime
import importlib.util
import io
import os

import pyarrow.parquet as pq

from segflow.datagen.nexmark import Bid, event
from support.processes import ROOT

STREAM = os.path.join(ROOT, "examples", "lambda", "stream.py")
DAILY = os.path.join(ROOT, "examples", "lambda", "daily.py")
_spec = importlib.util.spec_from_file_location("lambda_stream_example", STREAM)
_stream = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stream)
as_row = _stream.as_row            # the example's own row format: the input of both sides

EPOCH = datetime.date(1970, 1, 1)
DAY_MILLIS = 86_400_000


def daily_oracle(events: int) -> dict:
    """{(auction, date): [bids, volume, max_price]}."""
    totals: dict = {}
    for i in range(events):
        e = event(i)
        if isinstance(e, Bid):
            row = as_row(e)
            key = (row["auction"], EPOCH + datetime.timedelta(days=row["date_time"] // DAY_MILLIS))
            count, volume, top = totals.get(key, (0, 0, 0))
            totals[key] = (count + 1, volume + row["price"], max(top, row["price"]))
    return totals


def parquet_totals(objects: dict[str, bytes]) -> tuple[dict, collections.Counter]:
    """``{key: bytes}`` of the stage's ``epochs=*/part-0.parquet`` objects -> the combined
    totals as daily_oracle gives them, and the rows per partition."""
    totals: dict = {}
    rows = collections.Counter()
    for key, data in objects.items():
        table = pq.read_table(io.BytesIO(data)).to_pylist()
        rows[key.split("/")[0]] = len(table)
        for r in table:
            k = (r["auction"], r["day"])
            count, volume, top = totals.get(k, (0, 0, 0))
            totals[k] = (count + r["bids"], volume + r["volume"], max(top, r["max_price"]))
    return totals, rows
