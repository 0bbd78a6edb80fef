"""What review would check in the Dockerfiles, mechanically — pinned bases, non-root users,
and entrypoints that exist. (tests/images builds and runs them.)"""
import json
import os
import re
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGES = os.path.join(ROOT, "images")
DOCKERFILES = sorted(f for f in os.listdir(IMAGES) if f.endswith(".Dockerfile"))


def instructions(name):
    with open(os.path.join(IMAGES, name)) as f:
        lines = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def console_scripts():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return set(tomllib.load(f)["project"]["scripts"])


def test_there_is_an_image_for_the_operator_and_the_engine():
    assert {"engine.Dockerfile", "operator.Dockerfile"} <= set(DOCKERFILES)


def arg_defaults(name):
    """``ARG NAME=default`` before the first ``FROM``: what ``${NAME}`` in a ``FROM`` means
    when no ``--build-arg`` is given (a user's ``docker build``)."""
    defaults = {}
    for op, arg in instructions(name):
        if op == "FROM":
            break
        if op == "ARG" and "=" in arg:
            key, value = arg.split("=", 1)
            defaults[key.strip()] = value.strip()
    return defaults


@pytest.mark.parametrize("name", DOCKERFILES)
def test_base_images_are_pinned(name):
    defaults = arg_defaults(name)
    bases = [re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m[1], m[0]), arg.split()[0])
             for op, arg in instructions(name) if op == "FROM"]
    assert bases
    for base in bases:
        assert re.fullmatch(r"[\w./-]+:\d+(\.\d+)+[\w.-]*(@sha256:[0-9a-f]{64})?", base), \
            f"{name}: base image {base} is not pinned to a version"


@pytest.mark.parametrize("name", DOCKERFILES)
def test_the_final_stage_runs_as_a_numeric_non_root_user(name):
    ops = instructions(name)
    last_from = max(i for i, (op, _) in enumerate(ops) if op == "FROM")
    users = [arg for op, arg in ops[last_from:] if op == "USER"]
    assert users and users[-1].split(":")[0].isdigit() and users[-1].split(":")[0] != "0"


@pytest.mark.parametrize("name", DOCKERFILES)
def test_the_entrypoint_is_a_console_script_of_the_project(name):
    entrypoints = [json.loads(arg) for op, arg in instructions(name) if op == "ENTRYPOINT"]
    assert entrypoints and entrypoints[-1][0] in console_scripts()


@pytest.mark.parametrize("name", DOCKERFILES)
def test_copied_sources_exist(name):
    for op, arg in instructions(name):
        if op == "COPY" and not arg.startswith("--from"):
            for source in arg.split()[:-1]:
                assert os.path.exists(os.path.join(ROOT, source)), f"{name} copies missing {source}"


def test_skaffold_builds_every_image_from_an_existing_dockerfile():
    with open(os.path.join(ROOT, "skaffold.yaml")) as f:
        text = f.read()
    named = re.findall(r"dockerfile:\s*(\S+)", text)
    assert sorted(os.path.basename(n) for n in named) == DOCKERFILES
    assert "chartPath: charts/segflow" in text
