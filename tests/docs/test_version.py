"""The version has one home, pyproject.toml: the chart's appVersion and
``segflow --version`` say the same."""
from __future__ import annotations

import os

import pytest
import yaml

from segflow.cli.main import main
from segflow.reference.versions import project_version, with_app_version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def version() -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        return project_version(f.read())


def test_the_charts_app_version_is_pyprojects():
    with open(os.path.join(ROOT, "charts/segflow/Chart.yaml"), encoding="utf-8") as f:
        chart = yaml.safe_load(f)
    assert chart["appVersion"] == version(), "`make docs-reference` sets appVersion from pyproject.toml"


def test_segflow_version_prints_pyprojects(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"segflow {version()}\n", \
        "the installed package's metadata is older than pyproject.toml: reinstall it (make setup)"


def test_setting_the_app_version_changes_that_line_only():
    chart = 'name: segflow\nversion: 0.1.0\nappVersion: "0.0.9"\nhome: x\n'
    assert with_app_version(chart, "1.2.3") == 'name: segflow\nversion: 0.1.0\nappVersion: "1.2.3"\nhome: x\n'
