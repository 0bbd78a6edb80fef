"""The batch half of the lambda example: per auction and day (UTC), the number of bids,
their total and their highest price, over the bids (stream.py) that a range of
checkpoints committed.

The batch stage calls ``daily(spark, records)`` once per processed range of epochs, so an
(auction, day) that spans ranges has one row per range; count, sum and max combine across
them (sum the counts and totals, take the max of the maxima).
"""
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

MILLIS_PER_DAY = 86_400_000


def daily(spark: SparkSession, records: DataFrame) -> DataFrame:
    day = F.date_from_unix_date(F.floor(F.col("date_time") / MILLIS_PER_DAY).cast("int"))
    return (records.groupBy(F.col("auction"), day.alias("day"))
            .agg(F.count("*").alias("bids"), F.sum("price").alias("volume"), F.max("price").alias("max_price")))
