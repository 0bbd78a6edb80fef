"""Job modules that cannot be loaded or built, and -p parameters that do not fit: one
JobLoadError that says what to fix (tests/cli checks missing, unknown and malformed
parameters and missing modules through the command; these are the other cases)."""
import pytest

from segflow.cli.main import main
from segflow.errors import JobLoadError
from segflow.jobs.loader import JobModule, build_job, parse_params, run_job
from segflow.api.environment import Config


def job(tmp_path, source, name="job.py"):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return str(path)


def build(path, function="build", **params):
    return build_job(JobModule(path, function, params), Config())


@pytest.mark.parametrize("source,message", [
    ("def make(env):\n    pass\n", r"has no function build\(env, \*\*params\)"),
    ("build = 3\n", r"job\.py\.build is not a function"),
    ("def build(env:\n", "syntax error in job .*job.py, line 1"),
    ("import no_such_module_anywhere\n", r"failed while importing: ModuleNotFoundError.*\(at .*job.py:1\)"),
    ("def build(env):\n    raise KeyError('oops')\n",
     r"failed while building its pipeline: KeyError: 'oops' \(at .*job.py:2\)"),
    ("def build(env):\n    return None\n", r"build\(\) built no pipeline \(add a source on env\)"),
])
def test_broken_job_modules(tmp_path, source, message):
    with pytest.raises(JobLoadError, match=message):
        build(job(tmp_path, source))


def test_another_build_function_can_be_named(tmp_path):
    path = job(tmp_path, "def other(env):\n    env.from_iterable([1]).collect()\n")
    with pytest.raises(JobLoadError, match=r"has no function build"):
        build(path)
    env, _ = build(path, function="other")
    assert [op.name for b in env.graph.blocks for op in b.operators] == ["from_iterable", "collect"]


def test_segflow_errors_from_build_are_not_wrapped(tmp_path):
    """A pipeline error while building keeps its own message (it says what to do)."""
    from segflow import PipelineError
    path = job(tmp_path, "def build(env):\n    env.from_iterable([1]).split(0)\n")
    with pytest.raises(PipelineError, match="split needs an integer"):
        build(path)


@pytest.mark.parametrize("pairs,message", [
    (["=value"], r"'=value' is not of the form key=value"),
    ([" =value"], "is not of the form key=value"),
])
def test_parameters_need_a_key(pairs, message):
    with pytest.raises(JobLoadError, match=message):
        parse_params(pairs)


def test_parameters_keep_equals_signs_and_the_last_value_wins():
    assert parse_params(["expr=a=b", "n=1", "n=2", "empty="]) == {"expr": "a=b", "n": "2", "empty": ""}


def test_parameters_with_defaults_and_catch_all_parameters(tmp_path):
    path = job(tmp_path, "def build(env, n, scale='1', **extra):\n"
                         "    return env.from_iterable([int(n) * int(scale), len(extra)]).collect()\n")
    _, out = run_job(path, {"n": "3"})
    assert out.get() == [3, 0]
    _, out = run_job(path, {"n": "3", "scale": "2", "colour": "red"})
    assert out.get() == [6, 1]
    with pytest.raises(JobLoadError, match=r"needs parameter\(s\) n; usage: -p n=\.\.\. -p scale=\.\.\."):
        run_job(path, {"scale": "2"})


def test_the_command_prints_load_errors_without_a_traceback(tmp_path, capsys):
    path = job(tmp_path, "def make(env):\n    pass\n")
    assert main(["plan", path]) == 1
    err = capsys.readouterr().err
    assert "segflow: error: job" in err and "has no function build" in err and "Traceback" not in err
    assert main(["run", path, "-p", "=x"]) == 1
    assert "is not of the form key=value" in capsys.readouterr().err
