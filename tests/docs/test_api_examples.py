"""Every example in the public API's docstrings runs (doctest, one case per docstring),
every public operation has one, and only those that need an external server show their
call without running it (``+SKIP``). The checkers are shown to fail on a wrong example
and on a method without one."""
import doctest

import pytest

from api_examples import SKIPPABLE, api_objects, doctests, run, skipped_examples, without_examples

OBJECTS = api_objects()
DOCTESTS = doctests(OBJECTS)


@pytest.mark.parametrize("test", DOCTESTS, ids=[test.name for test in DOCTESTS])
def test_docstring_example_runs(test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results, report = run(test)
    assert results.failed == 0, f"{test.name} ({test.filename}:{test.lineno}):\n{report}"


def test_every_public_operation_has_an_example():
    missing = without_examples(OBJECTS)
    assert not missing, ("these public API docstrings have no runnable example (an Examples: section "
                         f"with >>> lines; see tests/docs/api_examples.py): {', '.join(missing)}")


def test_only_examples_that_need_a_server_are_skipped():
    skipping = {test.name.rsplit(".", 1)[-1] for test in DOCTESTS if skipped_examples(test)}
    assert skipping <= SKIPPABLE, f"examples skipped without needing a server: {sorted(skipping - SKIPPABLE)}"
    assert sum(len(test.examples) - skipped_examples(test) for test in DOCTESTS) >= 300


def test_a_wrong_example_fails():
    wrong = doctest.DocTestParser().get_doctest(
        ">>> env = segflow.StreamEnvironment(parallelism=1)\n"
        ">>> out = env.from_iterable([1, 2]).map(lambda x: x + 1).collect()\n"
        ">>> _ = env.execute()\n>>> out.get()\n[1, 2]\n",
        {"segflow": __import__("segflow")}, "wrong", "wrong.py", 0)
    results, report = run(wrong)
    assert results.failed == 1 and "Expected:\n    [1, 2]\nGot:\n    [2, 3]" in report


def test_a_method_without_an_example_is_named():
    class Operations:
        """A class.

        Examples:
            >>> Operations().shown()
            1
        """

        def shown(self) -> int:
            """Shown.

            Examples:
                >>> 1
                1
            """
            return 1

        def unshown(self) -> None:
            """No example."""

        def _private(self) -> None:
            pass

    def plain() -> None:
        """A function without one."""

    assert without_examples({"Operations": Operations, "plain": plain}) == ["Operations.unshown", "plain"]
