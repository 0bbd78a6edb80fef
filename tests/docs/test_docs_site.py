"""The documentation site builds in strict mode: a broken link, anchor, nav entry or API
reference (mkdocstrings) fails the build, and so this test, with mkdocs' own output.
It runs offline: the theme loads no web fonts and Mermaid is vendored."""
import os
import subprocess
import sys

from markdown_pages import ROOT


def test_site_builds_in_strict_mode(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}\n{build.stderr}"
    assert (tmp_path / "site" / "reference" / "python-api" / "index.html").exists()
