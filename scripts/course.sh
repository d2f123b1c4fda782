#!/bin/sh
# Set up the course in .venv (first run only) and open JupyterLab on notebooks/.
# Usage: sh scripts/course.sh [extra jupyter lab arguments]
set -eu
cd "$(dirname "$0")/.."
# .venv, the course and the CUDA wheels for this machine's driver (scripts/install.sh).
sh scripts/install.sh
.venv/bin/python -m course doctor || true
# Cloud GPU containers often run as root, which JupyterLab refuses without
# --allow-root; pass it there rather than fail.
if [ "$(id -u)" = 0 ]; then
    set -- --allow-root "$@"
fi
exec .venv/bin/jupyter lab notebooks/ "$@"
