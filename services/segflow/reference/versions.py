"""segflow's version has one home, pyproject.toml's ``version``: the installed package's
metadata carries it to ``segflow.__version__`` and ``segflow --version``, and
``python -m segflow.reference --write`` copies it to the chart's ``appVersion`` (its
``--check`` and tests/docs/test_version.py fail while they differ)."""
from __future__ import annotations

import re
import tomllib

_APP_VERSION = re.compile(r'^appVersion:.*$', re.M)


def project_version(pyproject: str) -> str:
    """``[project] version`` of pyproject.toml's text."""
    return str(tomllib.loads(pyproject)["project"]["version"])


def with_app_version(chart: str, version: str) -> str:
    """Chart.yaml's text with its ``appVersion`` set to ``version`` (the rest as it was)."""
    if not _APP_VERSION.search(chart):
        raise ValueError("Chart.yaml has no appVersion line")
    return _APP_VERSION.sub(f'appVersion: "{version}"', chart, count=1)
