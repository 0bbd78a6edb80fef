#!/usr/bin/env bash
# Creates .venv and installs segflow (editable) with every extra and its test tools, at the
# exact versions of requirements.lock.
# Installs are cached by pip outside the repo (~/.cache/pip).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $($PYTHON --version)"
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c requirements.lock -e '.[all,test]'
echo "setup: segflow installed at .venv/bin/segflow"
