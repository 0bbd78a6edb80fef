"""The benchmarks are not tests, but they must keep running as the engine changes: every
script in bench/ imports what it uses from segflow and parses its arguments (one of them
imported a name a refactoring had removed, and nobody noticed until it was run)."""
import glob
import os
import subprocess
import sys

import pytest

from support.processes import ROOT

SCRIPTS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "bench", "*.py"))
                 if os.path.basename(p) != "common.py")


def test_the_bench_directory_holds_the_scripts_the_readme_names():
    assert {"compare.py", "checkpointing.py", "segment_backup.py", "latency.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bench_script_starts_and_explains_its_options(script):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
