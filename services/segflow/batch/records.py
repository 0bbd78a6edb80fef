"""The committed parts of a range of epochs as one Spark DataFrame.

The format follows the parts' suffix, as the sinks write them: ``.jsonl`` parts give one
row per line with the JSON objects' fields as columns (a line that is not an object gives
a column ``value``), ``.csv`` parts string columns ``_c0, _c1, ...``, ``.txt`` parts one
string column ``value``. Types are inferred by pyarrow, and the table reaches Spark as
Arrow (several times faster than Spark's own JSON reader over an RDD of lines, which
starts Python workers to infer a schema). Epoch and replica are not columns: the result of
a range is the same however the stream was cut into epochs.
"""
from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING

import pyarrow as pa

from ..errors import SegflowError
from ..state.backend import StateBackend

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read_lines(store: StateBackend, names: list[str]) -> tuple[str, list[str]]:
    """The parts' suffix and their lines; parts of mixed formats are an error."""
    suffixes = {name.rsplit(".", 1)[1] for name in names}
    if len(suffixes) > 1:
        raise SegflowError(f"the sink output mixes part formats {sorted(suffixes)}: point the batch stage "
                           "at one sink's output")
    lines: list[str] = []
    for name in names:
        data = store.get(name)
        if data is None:
            raise SegflowError(f"part {name} disappeared while being read: was the job restarted from an "
                               "older checkpoint? The next run reads the range again")
        lines.extend(data.decode("utf-8").splitlines())
    return (suffixes.pop() if suffixes else ""), lines


def to_table(suffix: str, lines: list[str]) -> pa.Table:
    """The lines of parts with ``suffix`` as an Arrow table (see the module's doc)."""
    if suffix == "txt":
        return pa.table({"value": pa.array(lines, pa.string())})
    if suffix == "csv":
        rows = list(csv.reader(lines))
        width = max((len(r) for r in rows), default=0)
        return pa.table({f"_c{i}": pa.array([r[i] if i < len(r) else None for r in rows], pa.string())
                         for i in range(width)})
    records: list[dict] = []
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise SegflowError(f"line {number} of the range's .jsonl parts is not JSON ({exc}): {line[:200]!r}"
                               ) from exc
        records.append(value if isinstance(value, dict) else {"value": value})
    columns = list(dict.fromkeys(key for record in records for key in record))   # every field, in order seen
    try:
        return pa.table({key: pa.array([record.get(key) for record in records]) for key in columns})
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SegflowError(f"the range's .jsonl records do not fit one table (a field with values of "
                           f"different types?): {exc}") from exc


def to_dataframe(spark: "SparkSession", suffix: str, lines: list[str]) -> "DataFrame":
    return spark.createDataFrame(to_table(suffix, lines))
