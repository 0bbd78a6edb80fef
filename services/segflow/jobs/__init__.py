"""Jobs: Python modules with a ``build(env, **params)`` function."""
from .loader import JobModule, build_job, load_job, parse_params, run_job, run_pipeline

__all__ = ["JobModule", "build_job", "load_job", "parse_params", "run_job", "run_pipeline"]
