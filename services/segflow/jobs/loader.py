"""Finding a job module, checking its parameters, and building its pipeline.

A job is a module (a ``.py`` path or an importable name) whose ``build(env, **params)``
builds the pipeline on ``env``. Parameters arrive as strings from the command line; the
job converts what it needs. Every failure here is a :class:`JobLoadError` that says what
to fix, never a traceback from deep inside.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

from ..api.environment import StreamEnvironment
from ..errors import JobLoadError, SegflowError
from ..plan.compact import compact
from ..settings import Config
from ..suggestions import did_you_mean


@dataclass
class JobModule:
    """A job module and how to call it: the same module, function and parameters give the
    same plan in every process (coordinator, workers, Spark driver)."""

    target: str                       # path to a .py file or a module name
    function: str = "build"
    params: dict[str, str] = field(default_factory=dict)

    def default_name(self) -> str:
        """A name for the job's snapshots: the module's name."""
        base = os.path.basename(self.target.rstrip("/"))
        return base[:-3] if base.endswith(".py") else base.rpartition(".")[2] or "job"


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` from ``-p k=v`` options."""
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise JobLoadError(f"parameter {pair!r} is not of the form key=value (e.g. -p input=data.txt)")
        params[key.strip()] = value
    return params


def _import_path(path: str) -> ModuleType:
    if not os.path.isfile(path):
        raise JobLoadError(f"job file not found: {path}")
    name = "segflow_job_" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise JobLoadError(f"cannot load {path} as a Python module (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    directory = os.path.dirname(os.path.abspath(path))
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise JobLoadError(f"syntax error in job {path}, line {exc.lineno}: {exc.msg}") from exc
    except Exception as exc:
        sys.modules.pop(name, None)
        raise JobLoadError(f"job {path} failed while importing: {_where(exc)}") from exc
    return module


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    at = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{at}"


def load_job(spec: JobModule, signature: str = "(env, **params)") -> Callable[..., Any]:
    """The job's build function (or another function of a user module: ``signature``
    shows what it should look like in the error when it is missing)."""
    target = spec.target
    if target.endswith(".py") or os.sep in target:
        module = _import_path(target)
    else:
        if os.getcwd() not in sys.path:     # console scripts do not put it there; `python -m` does
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise JobLoadError(f"job module {target!r} not found ({exc}); pass a path to a .py file "
                               "or a module importable from the current directory") from exc
        except Exception as exc:
            raise JobLoadError(f"job module {target!r} failed while importing: {_where(exc)}") from exc
    fn = getattr(module, spec.function, None)
    if fn is None:
        raise JobLoadError(f"job {target} has no function {spec.function}{signature}")
    if not callable(fn):
        raise JobLoadError(f"{target}.{spec.function} is not a function")
    return fn


def _parameters(fn: Callable) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return []


def missing_parameters(fn: Callable, spec: JobModule) -> list[str]:
    """Required parameters of the build function that ``spec`` does not give."""
    return [p.name for p in _parameters(fn)
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
            and p.name not in spec.params]


def _check_params(fn: Callable, spec: JobModule) -> None:
    parameters = _parameters(fn)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    missing = missing_parameters(fn, spec)
    unknown = [k for k in spec.params if k not in names] if not accepts_any else []
    usage = " ".join(f"-p {n}=..." for n in names) or "(no parameters)"
    if unknown:     # first: a misspelt parameter is why another one is missing
        typed = ", ".join(name + did_you_mean(name, missing or names) for name in unknown)
        raise JobLoadError(f"job {spec.target} does not take parameter(s) {typed}; "
                           f"it takes: {', '.join(names) or 'none'}")
    if missing:
        raise JobLoadError(f"job {spec.target} needs parameter(s) {', '.join(missing)}; usage: {usage}")


def build_job(spec: JobModule, config: Config) -> tuple[StreamEnvironment, Any]:
    """Build the job's pipeline on a new environment; returns it and what build returned."""
    fn = load_job(spec)
    _check_params(fn, spec)
    env = StreamEnvironment(config)
    env.job_spec = spec
    try:
        returned = fn(env, **spec.params)
    except SegflowError:
        raise
    except Exception as exc:
        raise JobLoadError(f"job {spec.target} failed while building its pipeline: {_where(exc)}") from exc
    if not env.graph.blocks:
        raise JobLoadError(f"job {spec.target}: {spec.function}() built no pipeline (add a source on env)")
    compact(env.graph)
    return env, returned


def run_job(target: str, params: dict[str, str] | None = None, parallelism: int = 1,
            on_progress: Callable | None = None, runtime: str = "auto",
            **settings: Any) -> tuple[StreamEnvironment, Any]:
    """Build and run a job; returns the environment and build's return value.

    ``runtime="processes"`` runs it on a local coordinator and ``parallelism`` workers;
    ``settings`` are further :class:`Config` fields (checkpoint protocol, state URL...).

    Examples:
        >>> import pathlib
        >>> from segflow.jobs import run_job
        >>> _ = pathlib.Path("squares.py").write_text(
        ...     "def build(env, n):\\n    return env.from_iterable(range(int(n))).map(lambda x: x * x).collect()\\n")
        >>> env, out = run_job("squares.py", {"n": "4"}, parallelism=2, runtime="processes")
        >>> sorted(out.get())
        [0, 1, 4, 9]
    """
    env, returned = build_job(JobModule(target, params=dict(params or {})),
                              Config(parallelism=parallelism, runtime=runtime, **settings))
    if env.result is None:
        env.execute(on_progress=on_progress)
    return env, returned


def run_pipeline(build: Callable[[StreamEnvironment], Any], parallelism: int = 1,
                 runtime: str = "auto", on_progress: Callable | None = None, **settings: Any
                 ) -> tuple[StreamEnvironment, Any]:
    """Run ``build(env)`` as a job, also on worker processes (``runtime="processes"``):
    the function is serialized with cloudpickle so every worker rebuilds the pipeline.

    Examples:
        >>> from segflow.jobs import run_pipeline
        >>> def build(env):
        ...     return env.from_iterable(range(4)).shuffle().map(lambda x: -x).collect()
        >>> env, out = run_pipeline(build, parallelism=2, runtime="processes")
        >>> sorted(out.get())
        [-3, -2, -1, 0]
    """
    import cloudpickle
    import tempfile
    with tempfile.NamedTemporaryFile(prefix="segflow-pipeline-", suffix=".pkl", delete=False) as f:
        cloudpickle.dump(build, f)
    try:
        return run_job("segflow.jobs.pickled", {"payload": f.name}, parallelism, on_progress, runtime,
                       **settings)
    finally:
        os.unlink(f.name)
