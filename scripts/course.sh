#!/bin/sh
# Set up the course in .venv (first run only) and open JupyterLab on notebooks/.
# Usage: sh scripts/course.sh [extra jupyter lab arguments]
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "Setting up .venv (first run: CuPy and the Jupyter stack, a few minutes) ..."
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
.venv/bin/python -m course doctor || true
# Cloud GPU containers often run as root, which JupyterLab refuses without
# --allow-root; pass it there rather than fail.
if [ "$(id -u)" = 0 ]; then
    set -- --allow-root "$@"
fi
exec .venv/bin/jupyter lab notebooks/ "$@"
