#!/usr/bin/env bash
# Writes requirements.lock: the newest versions pyproject.toml's ranges allow, for
# '.[all,test]', resolved in a scratch virtualenv (outside the repo) and frozen.
#
#   scripts/lock.sh        (or: make lock)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
"$PYTHON" -m venv "$SCRATCH/venv"
"$SCRATCH/venv/bin/python" -m pip install --quiet --upgrade pip
"$SCRATCH/venv/bin/python" -m pip install --quiet -e '.[all,test]'
{
    echo "# Exact versions of every package CI and the images install (pip's constraints file)."
    echo "# Written by \`make lock\` from a fresh install of '.[all,test]'; pyproject.toml holds the ranges."
    "$SCRATCH/venv/bin/python" -m pip freeze --exclude-editable
} > requirements.lock
echo "lock: requirements.lock has $(grep -vc '^#' requirements.lock) packages"
