"""Jobs: Python modules with a ``build(env, **params)`` function."""
from .loader import JobSpec, build_job, load_job, parse_params, run_job

__all__ = ["JobSpec", "build_job", "load_job", "parse_params", "run_job"]
