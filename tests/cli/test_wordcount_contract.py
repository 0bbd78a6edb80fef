"""The wordcount contract, checked from outside through the ``segflow`` command."""
from __future__ import annotations

import os

import pytest

from support.wordcount import WORDCOUNT, oracle, read_parts, segflow, write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_wordcount_contract(corpus, tmp_path, parallelism):
    output = tmp_path / "out"
    result = segflow("run", WORDCOUNT, "-p", f"input={corpus}", "-p", f"output={output}",
                     "--parallelism", str(parallelism))
    assert result.returncode == 0, result.stderr
    rows = read_parts(str(output))
    words = [w for w, _ in rows]
    assert len(words) == len(set(words)), "a word appears in more than one line"
    assert dict(rows) == dict(oracle(corpus))
    assert len([n for n in os.listdir(output) if n.startswith("part-")]) == parallelism


def test_rerun_with_fewer_replicas_leaves_one_run(corpus, tmp_path):
    output = tmp_path / "out"
    for parallelism in (4, 2):
        result = segflow("run", WORDCOUNT, "-p", f"input={corpus}", "-p", f"output={output}",
                         "--parallelism", str(parallelism), "--quiet")
        assert result.returncode == 0, result.stderr
    assert dict(read_parts(str(output))) == dict(oracle(corpus))


def test_plan_shows_the_four_stages_in_two_blocks_split_by_the_shuffle():
    """Reading, splitting and pre-aggregating run in the source's block; the shuffle by
    word leads to the final aggregate and the sink."""
    result = segflow("plan", WORDCOUNT, "--parallelism", "4")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    blocks = text.split("\n\n")
    source = next(b for b in blocks if b.startswith("source block"))
    assert "4 replica(s)" in source
    assert [line.split("(")[0].strip() for line in source.splitlines()[1:4]] == \
        ["read_text", "flat_map", "group_by_count pre-aggregate"]
    final = next(b for b in blocks if "final aggregate" in b)
    assert source != final and "read_text" not in final and "write_text" in final
    assert "--hash--> block" in source
    assert "4 replica(s)" in final


def test_plan_dot_is_a_digraph():
    result = segflow("plan", WORDCOUNT, "--format", "dot")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("digraph segflow {") and result.stdout.rstrip().endswith("}")
    assert result.stdout.count("->") == 1 and 'b0 -> b1 [label="hash"]' in result.stdout


def test_plan_is_deterministic():
    first = segflow("plan", WORDCOUNT, "--parallelism", "3").stdout
    second = segflow("plan", WORDCOUNT, "--parallelism", "3").stdout
    assert first == second and first


@pytest.mark.parametrize("args, message", [
    (["run", WORDCOUNT, "-p", "input=/no/such/file", "-p", "output=/tmp/x"], "no such file: /no/such/file"),
    (["run", WORDCOUNT], "needs parameter(s) input, output"),
    (["run", WORDCOUNT, "-p", "input"], "not of the form key=value"),
    (["run", WORDCOUNT, "-p", "input=a", "-p", "output=b", "-p", "colour=red"], "does not take parameter(s) colour"),
    (["run", "no_such_job_module"], "job module 'no_such_job_module' not found"),
    (["run", "/no/such/job.py"], "job file not found"),
    (["run", WORDCOUNT, "-p", "input=a", "-p", "output=b", "--parallelism", "0"], "parallelism must be"),
])
def test_bad_input_gives_a_clear_error(args, message):
    result = segflow(*args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_failing_user_function_names_operator_and_record(tmp_path):
    job = tmp_path / "bad.py"
    job.write_text(
        "def parse(line):\n"
        "    return int(line)\n"
        "def build(env, input):\n"
        "    env.read_text(input).map(parse).for_each(print)\n", encoding="utf-8")
    data = tmp_path / "in.txt"
    data.write_text("1\n2\nthree\n4\n", encoding="utf-8")
    result = segflow("run", str(job), "-p", f"input={data}")
    assert result.returncode == 1
    assert "map(parse)" in result.stderr
    assert "bad.py:4" in result.stderr
    assert "record #2" in result.stderr and "'three'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_source_chained_to_its_sink_runs_in_processes_and_counts_its_records(tmp_path):
    """from_iterable -> map -> collect: the job loader compacts the graph, the run's environment
    does not again (a second pass chained the sink into the source, and the summary read the
    workers' block ids against a graph of fewer blocks)."""
    job = tmp_path / "job.py"
    job.write_text("def build(env):\n    return env.from_iterable(range(1000)).map(lambda x: 2 * x).collect()\n")
    result = segflow("run", str(job), "--parallelism", "2", "--checkpoint-protocol", "aligned",
                     "--state", f"file://{tmp_path / 'state'}")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "1,000 source records" in result.stderr, result.stderr
