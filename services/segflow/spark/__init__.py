"""Bounded segflow jobs on Apache Spark.

``segflow run JOB --engine spark`` builds the job's graph as usual and translates it into
PySpark: a block replica becomes a partition, an edge becomes a narrow dependency, a
coalesce or a shuffle, and associative aggregations use Spark's map-side combining. Users'
functions run unchanged, a partition at a time. Operators without a meaning on bounded
input are refused with :class:`UnsupportedOnSpark`.
"""
from .errors import UnsupportedOnSpark
from .runner import run_on_spark, run_job_on_spark

__all__ = ["UnsupportedOnSpark", "run_job_on_spark", "run_on_spark"]
