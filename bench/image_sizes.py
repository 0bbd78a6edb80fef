"""What each image in images/ adds to its base (python:3.11-slim), measured without a Docker
engine: the Python packages its Dockerfile installs (the same extras, at the versions of
requirements.lock, into a scratch virtualenv) and, for the Spark image, the Debian
packages it installs (their Installed-Size). Prints a markdown table, then one JSON line.

    .venv/bin/python bench/image_sizes.py
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

from common import report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGES = {"operator": "kubernetes,s3", "engine": "redis,s3", "spark": "all"}
SPARK_APT = ["openjdk-17-jre-headless", "procps"]

def _du_mb(path: str) -> float:
    out = subprocess.run(["du", "-sk", path], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0]) / 1024


def python_packages_mb(extras: str, scratch: str) -> float:
    venv = os.path.join(scratch, extras.replace(",", "-"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", os.path.join(venv, "bin", "python"), "install",
                    "--quiet", "--no-compile", "-c", os.path.join(ROOT, "requirements.lock"), f"{ROOT}[{extras}]"],
                   check=True, cwd=scratch)
    site = os.path.join(venv, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
    return _du_mb(site)


def apt_packages_mb(packages: list[str]) -> float:
    """The Installed-Size of ``packages`` themselves (the Java runtime dominates; the few
    small libraries it pulls into a slim base are not counted)."""
    total_kb = 0
    for name in packages:
        shown = subprocess.run(["apt-cache", "show", "--no-all-versions", name], capture_output=True, text=True,
                               check=True).stdout
        total_kb += int(re.search(r"^Installed-Size: (\d+)", shown, re.M).group(1))
    return total_kb / 1024


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="segflow-image-sizes-") as scratch:
        for image, extras in IMAGES.items():
            print(f"measuring {image} ({extras})...", file=sys.stderr, flush=True)
            results[image] = {"extras": extras, "python_mb": round(python_packages_mb(extras, scratch), 1)}
    results["spark"]["apt_mb"] = round(apt_packages_mb(SPARK_APT), 1)
    print("| image | extras | Python packages (MB) | Debian packages (MB) | added to python:3.11-slim (MB) |")
    print("|---|---|---|---|---|")
    for image, r in results.items():
        added = r["python_mb"] + r.get("apt_mb", 0)
        print(f"| {image} | `[{r['extras']}]` | {r['python_mb']:.0f} | {r.get('apt_mb', 0):.0f} | {added:.0f} |")
    report("image_sizes", {f"{image}_added_mb": round(r["python_mb"] + r.get("apt_mb", 0), 1)
                           for image, r in results.items()})


if __name__ == "__main__":
    main()
