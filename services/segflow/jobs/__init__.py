"""Jobs: Python modules with a ``build(env, **params)`` function."""
from .loader import JobSpec, build_job, load_job, parse_params, run_job, run_pipeline

__all__ = ["JobSpec", "build_job", "load_job", "parse_params", "run_job", "run_pipeline"]
