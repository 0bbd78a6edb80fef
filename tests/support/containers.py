"""Containers of the images of images/ for the tests (scripts/images/build.sh builds them
through its cache; scripts/cluster/sandbox runs them): each in a network namespace the
test creates and deletes, its processes stopped by the end of the call."""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from .processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.netns import delete, run  # noqa: E402
from sandbox import runner  # noqa: E402
from sandbox.bundle import Bundle  # noqa: E402
from sandbox.process import process_of  # noqa: E402

BUILD = os.path.join(ROOT, "scripts", "images", "build.sh")
BUILD_TIMEOUT = 1800          # a fresh machine: the base, three images (Spark's sdist) and their bundles
_names = itertools.count()


def build_images(manifest: str) -> dict[str, Bundle]:
    """Every image of images/, built or found in the cache: name -> bundle."""
    subprocess.run([BUILD, "--manifest", manifest], check=True, timeout=BUILD_TIMEOUT, cwd=ROOT)
    with open(manifest) as f:
        return {name: Bundle(entry["bundle"]) for name, entry in json.load(f).items()}


@contextlib.contextmanager
def isolated(directory: str, name: str) -> Iterator[str]:
    """A network namespace ``name`` with only its loopback up (a container run on its own),
    recorded in ``directory`` as the node agent records its own, and deleted after the block."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w"):
        pass
    try:
        run("ip", "netns", "add", name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        yield name
    finally:
        delete(directory, name)


def namespace_pids(name: str) -> list[int]:
    """The processes whose network namespace is ``name``."""
    listed = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=True)
    return [int(pid) for pid in listed.stdout.split()]


@dataclass(frozen=True)
class Ran:
    exit_code: int
    output: str


def run_container(bundle: Bundle, container: dict, directory: str, volumes: tuple[runner.Volume, ...] = (),
                  env: dict[str, str] | None = None, timeout: float = 120, netns: str | None = None,
                  hostname: str = "test-pod") -> Ran:
    """Run one container (with the pod's variables ``env``) to its end, killed after
    ``timeout`` seconds; its writable layer under ``directory``. Its network namespace is
    ``netns`` (the caller's), else one of its own, deleted afterwards."""
    if netns is None:
        name = f"segflow-test-{os.getpid()}-{next(_names)}"
        with isolated(os.path.join(directory, "netns"), name):
            return run_container(bundle, container, directory, volumes, env, timeout, name, hostname)
    process = process_of(bundle.image(), container, env or {}, bundle.read("/etc/passwd"), bundle.read("/etc/group"))
    started = runner.start(bundle, process, netns, os.path.join(directory, "container"), hostname,
                           subprocess.PIPE, volumes)
    try:
        output, _ = started.communicate(timeout=timeout)
    finally:
        code = runner.kill(started)
    return Ran(code, output.decode(errors="replace"))
