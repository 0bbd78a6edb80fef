"""The command line forgives typing: a version, and the nearest known name for a mistyped
command, option or job parameter, from the parser the mistake belongs to."""
import pytest

from segflow.cli.main import main
from segflow.suggestions import did_you_mean
from test_wordcount_contract import WORDCOUNT, segflow


def test_version():
    result = segflow("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("segflow ") and result.stdout.split()[1][0].isdigit()


@pytest.mark.parametrize("argv, usage, said", [
    (["run", WORDCOUNT, "--paralelism", "2"], "usage: segflow run",
     "segflow run: error: unrecognized arguments: --paralelism (did you mean --parallelism?) 2"),
    (["run", "--checkpoint-interval=1", WORDCOUNT, "--chekpoint-protocol=aligned"], "usage: segflow run",
     "--chekpoint-protocol=aligned (did you mean --checkpoint-protocol?)"),
    (["plan", WORDCOUNT, "--formt", "dot"], "usage: segflow plan", "--formt (did you mean --format?)"),
    (["rnu", WORDCOUNT], "usage: segflow [-h]", "no command 'rnu' (did you mean run?); commands: run,"),
    (["run", WORDCOUNT, "--zzzz"], "usage: segflow run", "unrecognized arguments: --zzzz\n"),
])
def test_a_mistyped_command_or_option_is_refused_by_its_parser_with_the_nearest_name(argv, usage, said, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert said in err, err


def test_a_mistyped_parameter_names_the_one_meant():
    result = segflow("run", WORDCOUNT, "-p", "inptu=a.txt", "-p", "output=out")
    assert result.returncode == 1
    assert "does not take parameter(s) inptu (did you mean input?); it takes: input, output" in result.stderr


@pytest.mark.parametrize("typed, known, said", [
    ("--paralelism", ["--parallelism", "--param"], " (did you mean --parallelism?)"),
    ("colour", ["input", "output"], ""),
    ("", ["a"], ""),
])
def test_did_you_mean(typed, known, said):
    assert did_you_mean(typed, known) == said
