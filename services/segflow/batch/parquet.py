"""A Spark DataFrame as one Parquet object (pyarrow), put whole into the output store."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from ..state.backend import StateBackend

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def write_parquet(frame: "DataFrame", store: StateBackend, key: str) -> int:
    """Write ``frame`` to ``key`` (replacing what is there); the number of rows.

    The result of one range is collected to the driver and written as a single object:
    the store's put is atomic (rename, or one PutObject), so a crash leaves either the old
    object or the new one, and a batch stage's result per range is an aggregate, small
    next to its input."""
    table = frame.toArrow()
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    store.put(key, buffer.getvalue().to_pybytes())
    return table.num_rows
