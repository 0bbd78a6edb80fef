"""The public API's docstring examples: which objects must have them, finding them as
doctests, and running one. The examples assume ``import segflow`` (the reference page
says so), so every doctest gets ``segflow`` in its globals; each runs in the current
directory, where file examples write their files."""
from __future__ import annotations

import doctest
import inspect
import io
import sys
from typing import Any

import segflow
from segflow.api.join import JoinBuilder
from segflow.jobs import loader

# Public names that are not operations: settings, errors and the records the runtime makes.
NOT_OPERATIONS = {"Config", "SegflowError", "PipelineError", "JobLoadError", "JobFailed", "UserFunctionError",
                  "Window", "WindowResult"}
# Public methods the runtime calls, not a job: they are documented, not exemplified.
RUNTIME_HOOKS = {"make", "stamps_results", "next_watermark"}
# The examples that may only show the call (``+SKIP``): they need a Redis or S3 server.
SKIPPABLE = {"read_redis_stream", "write_redis_stream", "write_s3"}


def api_objects() -> dict[str, Any]:
    """The operations' classes and functions by name: segflow's public names but those
    above, the two runners of ``segflow.jobs``, and the join builder ``join_with``
    returns."""
    names = [name for name in segflow.__all__ if name not in NOT_OPERATIONS]
    return {**{name: getattr(segflow, name) for name in names},
            "run_job": loader.run_job, "run_pipeline": loader.run_pipeline, "JoinBuilder": JoinBuilder}


def public_methods(cls: type) -> dict[str, Any]:
    """A class's public methods (inherited ones too) by name, as its users call them."""
    return {name: member for name, member in inspect.getmembers(cls)
            if not name.startswith("_") and name not in RUNTIME_HOOKS
            and (inspect.isfunction(member) or inspect.ismethod(member))}


def has_example(obj: Any) -> bool:
    """Whether the object's own docstring (not one inherited, as ``inspect.getdoc``
    would find) holds a doctest example."""
    return bool(doctest.DocTestParser().get_examples(obj.__doc__ or ""))


def without_examples(objects: dict[str, Any]) -> list[str]:
    """``Class``, ``Class.method`` or ``function`` names whose docstring shows no example."""
    missing = [name for name, obj in objects.items() if not has_example(obj)]
    for class_name, cls in objects.items():
        if inspect.isclass(cls):
            missing += [f"{class_name}.{name}" for name, method in public_methods(cls).items()
                        if not has_example(method)]
    return sorted(missing)


def modules_of(objects: dict[str, Any]) -> list[Any]:
    """The modules that define the objects and their methods (the ops families')."""
    names = {obj.__module__ for obj in objects.values()}
    for cls in filter(inspect.isclass, objects.values()):
        names |= {method.__module__ for method in public_methods(cls).values()}
    return [sys.modules[name] for name in sorted(names)]


def doctests(objects: dict[str, Any]) -> list[doctest.DocTest]:
    """Every doctest of the modules, one per docstring with examples."""
    finder = doctest.DocTestFinder()
    found = [test for module in modules_of(objects)
             for test in finder.find(module, extraglobs={"segflow": segflow}) if test.examples]
    return sorted(found, key=lambda test: test.name)


def skipped_examples(test: doctest.DocTest) -> int:
    return sum(1 for example in test.examples if example.options.get(doctest.SKIP))


def run(test: doctest.DocTest) -> tuple[doctest.TestResults, str]:
    """Run one doctest; its failures' report (expected and got) is returned, not printed."""
    report = io.StringIO()
    runner = doctest.DocTestRunner()
    runner.run(test, out=report.write, clear_globs=True)
    return doctest.TestResults(runner.failures, runner.tries), report.getvalue()
