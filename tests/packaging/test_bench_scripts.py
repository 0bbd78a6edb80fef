"""The benchmarks are not tests, but they must keep running as the engine changes: every
script in bench/ imports what it uses from segflow and parses its arguments (one of them
imported a name a refactoring had removed, and nobody noticed until it was run)."""
import glob
import importlib.util
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


def test_the_benches_read_the_summary_line_segflow_run_prints(tmp_path):
    """bench/common.py parses the job's own run time from ``segflow run``'s last line; a
    change of that line's wording made every checkpointing bench run look failed."""
    spec = importlib.util.spec_from_file_location("bench_common", os.path.join(ROOT, "bench", "common.py"))
    common = sys.modules[spec.name] = importlib.util.module_from_spec(spec)     # dataclasses look it up there
    spec.loader.exec_module(common)
    corpus = tmp_path / "words.txt"
    corpus.write_text("a b a\nc a b\n" * 500)
    done = subprocess.run([common.SEGFLOW, "run", os.path.join(ROOT, "examples", "wordcount.py"),
                           "-p", f"input={corpus}",
                           "-p", f"output={tmp_path / 'out'}", "--parallelism", "2", "--processes"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    match = common.DONE.search(done.stderr)
    assert match, done.stderr[-2000:]
    assert 0 < float(match.group(1)) < 60 and int(match.group(2).replace(",", "")) == 1000
