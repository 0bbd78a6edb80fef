"""Where each generated page comes from: the I/O that reads the code and the files a
page is made of, and hands them to the pure functions of this package.

``pages(root)`` is every generated file (the chart's Chart.yaml among them, whose
appVersion follows pyproject.toml) by its path under the repository ``root``;
``differing(root)`` those whose committed text is not that.
"""
from __future__ import annotations

import argparse
import glob
import json
import os

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; the test extra installs it

from . import benchmarks, changelog, cli, helm_values, metrics, streamjob, versions

CRD = "charts/segflow/crds/streamjobs.segflow.io.yaml"
VALUES = "charts/segflow/values.yaml"
CHART = "charts/segflow/Chart.yaml"


def pages(root: str) -> dict[str, str]:
    """Each generated file's path (relative to ``root``) and the text it should hold."""
    def read(path: str) -> str:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()

    return {
        "docs/reference/cli.md": cli.cli_markdown(cli_parser()),
        "docs/reference/streamjob.md": streamjob.streamjob_markdown(yaml.safe_load(read(CRD))),
        "docs/reference/helm-values.md": helm_values.helm_values_markdown(read(VALUES), yaml.safe_load(read(VALUES))),
        "docs/reference/metrics.md": metrics.metrics_markdown(metric_sections()),
        "docs/benchmarks/index.md": benchmarks.benchmarks_markdown(bench_runs(root), bench_methods(root)),
        "docs/changelog.md": changelog.changelog_page(read("CHANGELOG.md")),
        CHART: versions.with_app_version(read(CHART), versions.project_version(read("pyproject.toml"))),
    }


def differing(root: str) -> dict[str, str]:
    """The generated files whose text under ``root`` is not what the code generates
    (or that are missing), with the text they should hold."""
    def current(path: str) -> str | None:
        full = os.path.join(root, path)
        if not os.path.exists(full):
            return None
        with open(full, encoding="utf-8") as f:
            return f.read()
    return {path: text for path, text in pages(root).items() if current(path) != text}


def cli_parser() -> argparse.ArgumentParser:
    """segflow's argument parser, as ``segflow`` builds it."""
    from segflow.cli.main import _parser
    return _parser()


def metric_sections() -> dict[str, tuple[str, list[metrics.Metric]]]:
    """The job processes' registry (with its checkpoint metrics and the executors'
    collector, as a coordinator and a worker set it up) and the operator's metrics."""
    from prometheus_client import REGISTRY

    import segflow_operator.metrics as operator_metrics
    from segflow.observability.metrics import ServiceMetrics

    service = ServiceMetrics()
    service.checkpoint_metrics({})
    service.watch_executors(lambda: [])
    operators = [c for c in metrics.registered(REGISTRY) if c in vars(operator_metrics).values()]
    return {
        "Jobs": ("Served at /metrics by a job's coordinator and workers (`--metrics-port`; in Kubernetes the "
                 "pods' `metrics` port, StreamJob `spec.metricsPort`): the executors' counters per block, "
                 "operator and replica, the network's per input, the checkpoints' and the pending windows' "
                 "of segment backup (segflow.observability.metrics).",
                 metrics.described(metrics.registered(service.registry))),
        "Operator": ("Served at /metrics by the operator (`--metrics-port`, the Helm value `metrics.port`), "
                     "per StreamJob where labelled (segflow_operator.metrics).",
                     metrics.described(operators)),
    }


def bench_runs(root: str) -> list[benchmarks.Run]:
    """Every results file under bench/results, with its path relative to ``root``."""
    runs = []
    for path in sorted(glob.glob(os.path.join(root, "bench", "results", "*", "*.json"))):
        with open(path, encoding="utf-8") as f:
            runs.append((os.path.relpath(path, root), json.load(f)))
    return runs


BENCH_HELPERS = frozenset({"common", "stall_probe"})      # bench/ modules the benches import: no benches


def bench_methods(root: str) -> dict[str, str]:
    """Each bench script's docstring by its name (:data:`BENCH_HELPERS` are none)."""
    methods = {}
    for path in sorted(glob.glob(os.path.join(root, "bench", "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name not in BENCH_HELPERS:
            with open(path, encoding="utf-8") as f:
                methods[name] = benchmarks.method_of(f.read())
    return methods
