"""pyproject.toml asks for compatible ranges, requirements.lock holds the exact versions CI
and the images install, and the images take only the extras they need."""
import os
import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support.processes import ROOT

with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    PROJECT = tomllib.load(f)["project"]


def lock() -> dict[str, str]:
    pins = {}
    with open(os.path.join(ROOT, "requirements.lock")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, version = line.partition("==")
                assert version, f"requirements.lock: {line!r} is not an exact pin"
                pins[canonicalize_name(name)] = version
    return pins


def requirements():
    extras = PROJECT["optional-dependencies"]
    for text in PROJECT["dependencies"] + [r for name, rs in extras.items() if name != "all" for r in rs]:
        if canonicalize_name(Requirement(text).name) != "segflow":     # an extra naming others, as test names docs
            yield Requirement(text)


@pytest.mark.parametrize("requirement", list(requirements()), ids=str)
def test_every_requirement_is_a_range_the_lock_satisfies(requirement):
    assert not any(spec.operator == "==" for spec in requirement.specifier), \
        f"{requirement}: ask for a compatible range in pyproject.toml; exact versions go in requirements.lock"
    assert any(spec.operator == "<" for spec in requirement.specifier), f"{requirement}: no upper bound"
    pinned = lock().get(canonicalize_name(requirement.name))
    assert pinned is not None, f"{requirement.name} is not in requirements.lock: run make lock"
    assert requirement.specifier.contains(pinned), f"requirements.lock has {requirement.name}=={pinned}"


def test_the_core_needs_no_optional_package():
    core = {canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"]}
    assert not core & {"pyspark", "pyarrow", "boto3", "redis", "kopf", "kubernetes"}
    assert PROJECT["optional-dependencies"]["all"] == ["segflow[redis,s3,kubernetes,spark,columnar]"]


@pytest.mark.parametrize("image, extras", [("engine", "redis,s3"), ("operator", "kubernetes,s3"), ("spark", "all")])
def test_each_image_installs_its_extras_at_the_locked_versions(image, extras):
    with open(os.path.join(ROOT, "images", f"{image}.Dockerfile")) as f:
        text = f.read()
    assert re.search(rf"pip wheel .*-c requirements\.lock '\.\[{extras}\]'", text), text


def test_the_build_context_leaves_out_the_virtualenv_and_the_tests():
    with open(os.path.join(ROOT, ".dockerignore")) as f:
        ignored = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    assert {".venv", ".git", "tests"} <= ignored
