"""The package's public names: one list (the ``TYPE_CHECKING`` imports of
``segflow/__init__.py``), each imported only when first used, and a version that is
pyproject.toml's."""
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import segflow

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_is_the_object_of_its_home():
    assert "StreamEnvironment" in segflow.__all__ and "SegflowError" in segflow.__all__
    from segflow.errors import SegflowError
    assert segflow.SegflowError is SegflowError
    assert all(getattr(segflow, name) is not None for name in segflow.__all__)
    assert set(segflow.__all__) <= set(dir(segflow))


def test_importing_the_package_imports_neither_the_api_nor_the_package_metadata():
    probe = "import json, sys, segflow; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                       timeout=60, check=True).stdout)
    assert [m for m in loaded if m.startswith("segflow.api") or m == "importlib.metadata"] == []


def test_the_version_is_pyprojects():
    assert segflow.__version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
