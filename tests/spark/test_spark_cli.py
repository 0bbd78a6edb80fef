"""The wordcount contract through the ``segflow`` command with ``--engine spark``, and the
command's refusals (which answer before any JVM starts)."""
from __future__ import annotations

import os
import subprocess

import pytest

from support.wordcount import WORDCOUNT, oracle, write_corpus
from support.wordcount import segflow as run_segflow


def segflow(*args: str) -> subprocess.CompletedProcess:
    return run_segflow(*args, timeout=300)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def parts(directory: str) -> dict[str, list[str]]:
    """Each part file's lines, sorted (line order within a part is not part of the contract)."""
    found = {}
    for name in sorted(os.listdir(directory)):
        if name == "_SUCCESS":
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            found[name] = sorted(f.read().splitlines())
    return found


def test_wordcount_on_spark_writes_what_the_engine_writes(corpus, tmp_path):
    on_spark, on_engine = tmp_path / "spark", tmp_path / "engine"
    result = segflow("run", WORDCOUNT, "-p", f"input={corpus}", "-p", f"output={on_spark}",
                     "--engine", "spark", "--parallelism", "3")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "source records" in result.stderr
    engine = segflow("run", WORDCOUNT, "-p", f"input={corpus}", "-p", f"output={on_engine}", "--parallelism", "3",
                     "--quiet")
    assert engine.returncode == 0, engine.stderr
    spark_parts = parts(str(on_spark))
    assert list(spark_parts) == ["part-00000.txt", "part-00001.txt", "part-00002.txt"]
    assert spark_parts == parts(str(on_engine))        # the same words in the same part files
    expected = oracle(corpus)
    rows = [line.split("\t") for lines in spark_parts.values() for line in lines]
    assert {word: int(n) for word, n in rows} == dict(expected) and len(rows) == len(expected)


@pytest.mark.parametrize("args, message", [
    (["--engine", "spark", "--checkpoint-protocol", "aligned", "--state", "file:///tmp/x"],
     "drop --threads/--processes and the checkpoint options"),
    (["--engine", "spark", "--processes"], "runs the job as a Spark batch"),
    (["--spark-master", "local[2]"], "--spark-master needs --engine spark"),
])
def test_options_that_do_not_fit_spark(args, message, tmp_path):
    result = segflow("run", WORDCOUNT, "-p", f"input={WORDCOUNT}", "-p", f"output={tmp_path}", *args)
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr


def test_processing_time_window_is_refused(tmp_path):
    job = tmp_path / "clock.py"
    job.write_text("from segflow import ProcessingTimeWindow\n"
                   "def build(env, output):\n"
                   "    (env.from_iterable(range(10)).window_all(ProcessingTimeWindow.tumbling(1.0)).count()\n"
                   "        .write_text(output))\n", encoding="utf-8")
    result = segflow("run", str(job), "-p", f"output={tmp_path / 'out'}", "--engine", "spark")
    assert result.returncode == 1
    assert "processing_time_window(1.0, 1.0).count (defined at" in result.stderr
    assert "clock.py:3) cannot run on Spark: processing-time windows" in result.stderr
    assert "use EventTimeWindow after add_timestamps" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
