"""The process's one SparkSession, started on first use.

A JVM and a SparkContext take seconds to start and Spark allows one context per process,
so every job of the process (and every test of a test session) shares it. Local masters
bind to loopback only; logs are cut to errors so a job's output is not buried.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
from typing import TYPE_CHECKING

from ..errors import SegflowError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_lock = threading.Lock()
_session: "SparkSession | None" = None

# User-function failures come back to the driver as one clear error; the executor's own
# report of them (a Java and a Python stack trace) would only repeat it.
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""


def _log_config() -> str:
    path = os.path.join(tempfile.gettempdir(), "segflow-spark-log4j2.properties")
    with open(path, "w", encoding="utf-8") as f:
        f.write(_LOG4J)
    return path


def get_session(master: str | None = None) -> "SparkSession":
    """The running session, or a new one on ``master`` (default ``local[*]``).

    Asking for another master than the running session's is an error: Spark cannot run
    two contexts in one process."""
    global _session
    with _lock:
        if _session is not None:
            running = _session.sparkContext.master
            if master is not None and master != running:
                raise SegflowError(f"this process already runs Spark on {running}; Spark allows one context per "
                                   f"process, so {master} needs a new process (or leave --spark-master out)")
            return _session
        _session = _start(master or "local[*]")
        return _session


def _start(master: str) -> "SparkSession":
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Workers must run this interpreter: it is the one with segflow and the job's imports.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.serializers import CloudPickleSerializer
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SegflowError("--engine spark needs PySpark: pip install 'pyspark==4.3.0' (make setup installs it)"
                           ) from exc
    conf = (SparkConf().setMaster(master).setAppName("segflow")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
            .set("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile=file:{_log_config()}"))
    if master.startswith("local"):
        conf.set("spark.driver.bindAddress", "127.0.0.1").set("spark.driver.host", "127.0.0.1")
    # Records are pickled with cloudpickle, like functions, so that classes defined in a
    # job module (shipped by value, see runner) travel as well as the functions do.
    context = SparkContext(conf=conf, serializer=CloudPickleSerializer())
    context.setLogLevel("ERROR")
    return SparkSession(context)


def stop_session() -> None:
    """Stop the session (a test session's end); the next :func:`get_session` starts anew."""
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None
