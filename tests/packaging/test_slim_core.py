"""The core install: the engine, local and distributed runs and file state work without any
optional package; a feature whose package is missing says which extra to install.

The optional packages are hidden from every process of a run (the CLI, its coordinator and
workers) by an import hook in a ``sitecustomize`` on PYTHONPATH, as if they were not installed."""
import collections
import os
import subprocess

import pytest

from support.processes import ROOT, SEGFLOW
from support.servers import free_port

OPTIONAL = ("redis", "boto3", "botocore", "pyspark", "pyarrow", "kopf", "kubernetes")
WORDCOUNT = os.path.join(ROOT, "examples", "wordcount.py")
HIDE = f'''
import sys

class HideOptionalPackages:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {OPTIONAL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, HideOptionalPackages())
'''


@pytest.fixture
def core_only(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HIDE)
    return {**os.environ, "PYTHONPATH": str(hook)}


def segflow(env, *args):
    return subprocess.run([SEGFLOW, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


def test_the_hook_hides_the_optional_packages(core_only):
    probe = subprocess.run([os.path.join(os.path.dirname(SEGFLOW), "python"), "-c", "import redis"],
                           env=core_only, capture_output=True, text=True, timeout=60)
    assert probe.returncode != 0 and "hidden by the test" in probe.stderr


def test_a_distributed_run_with_checkpoints_needs_no_optional_package(core_only, tmp_path):
    text = "the quick brown fox jumps over the lazy dog the end\n" * 500
    (tmp_path / "in.txt").write_text(text)
    result = segflow(core_only, "run", WORDCOUNT, "-p", f"input={tmp_path / 'in.txt'}", "-p",
                     f"output={tmp_path / 'out'}", "--parallelism", "2", "--checkpoint-protocol", "aligned",
                     "--checkpoint-interval", "0.2", "--state", f"file://{tmp_path / 'state'}")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = {}
    for name in os.listdir(tmp_path / "out"):
        if name.startswith("part-"):
            for line in (tmp_path / "out" / name).read_text().splitlines():
                word, n = line.split("\t")
                counts[word] = counts.get(word, 0) + int(n)
    assert counts == dict(collections.Counter(text.split()))


@pytest.mark.parametrize("args, extra", [
    (["--checkpoint-protocol", "aligned", "--state", "redis://127.0.0.1:{port}/0"], "redis"),
    (["--checkpoint-protocol", "aligned", "--state", "s3://bucket/state"], "s3"),
    (["--engine", "spark"], "spark"),
])
def test_a_feature_without_its_package_names_the_extra(core_only, tmp_path, args, extra):
    args = [a.format(port=free_port()) for a in args]
    result = segflow(core_only, "run", WORDCOUNT, "-p", f"input={WORDCOUNT}", "-p", f"output={tmp_path / 'out'}",
                     *args)
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"pip install 'segflow[{extra}]'" in result.stderr and "Traceback" not in result.stderr


def test_a_connector_without_its_package_fails_the_job_in_the_worker_with_the_extra(core_only, tmp_path):
    job = tmp_path / "from_redis.py"
    job.write_text("def build(env, url, output):\n"
                   "    env.read_redis_stream(url, 'numbers').write_text(output)\n")
    result = segflow(core_only, "run", str(job), "-p", f"url=redis://127.0.0.1:{free_port()}/0",
                     "-p", f"output={tmp_path / 'out'}", "--parallelism", "2")
    assert result.returncode == 1, result.stderr[-2000:]
    assert "pip install 'segflow[redis]'" in result.stderr
