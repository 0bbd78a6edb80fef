"""Every ```python block in README.md and docs/**/*.md runs, as a reader would paste it:
each in a fresh interpreter, in an empty temporary directory, with services/ and the
repository on PYTHONPATH, for at most 60 s. A block preceded by a line
``<!-- no-run: reason -->`` is skipped (and counted as skipped); any other failing block
fails the suite with its output. Shell, YAML and other blocks are not run: they need a
cluster, a checkout's make targets or a store that a test cannot assume."""
import os
import subprocess
import sys

import pytest

from markdown_pages import ROOT, Block, blocks, pages

TIMEOUT = 60
PYTHON_BLOCKS = [block for page in pages() for block in blocks(page) if block.lang in ("python", "py")]


def run_block(block: Block, cwd) -> subprocess.CompletedProcess:
    path = os.pathsep.join(filter(None, [str(ROOT / "services"), str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", block.code], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "PYTHONPATH": path})


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[block.name for block in PYTHON_BLOCKS])
def test_python_block_runs(block, tmp_path):
    if block.no_run:
        pytest.skip(f"no-run: {block.no_run}")
    done = run_block(block, tmp_path)
    assert done.returncode == 0, (f"{block.name} failed:\n{block.code}\n"
                                  f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")


def test_blocks_are_found_and_counted():
    """Guards the parser: the pages hold runnable examples, README's among them."""
    run = [block for block in PYTHON_BLOCKS if not block.no_run]
    skipped = len(PYTHON_BLOCKS) - len(run)
    print(f"python blocks: {len(run)} run, {skipped} skipped")
    assert len(run) >= 10, f"only {len(run)} runnable python blocks found ({skipped} skipped)"
    assert any(block.page.name == "README.md" for block in run)


def test_a_failing_block_fails(tmp_path):
    broken = blocks(ROOT / "example.md", "```python\nraise SystemExit(3)\n```\n")[0]
    assert run_block(broken, tmp_path).returncode == 3


def test_no_run_marker_applies_to_the_next_block_only():
    text = ("<!-- no-run: needs a Redis server -->\n\n```python\nimport redis\n```\n\n"
            "```python\nprint(1)\n```\n    <!-- no-run: indented -->\n    ```py\n    x = 1\n    ```\n")
    found = blocks(ROOT / "example.md", text)
    assert [(b.lang, b.no_run, b.code) for b in found] == [
        ("python", "needs a Redis server", "import redis"), ("python", None, "print(1)"), ("py", "indented", "x = 1")]
