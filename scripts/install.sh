#!/bin/sh
# Install the course editable into .venv with the CUDA wheels for this
# machine's driver, plus any extras named (scripts/test.sh adds "test").
# COURSE_VENV=path puts it in another virtualenv (scripts/test_python.sh: one
# per interpreter).
# scripts/course.sh and scripts/test.sh call it; running it again is quick.
#
# The CUDA wheels (CuPy, cuda-python, NVRTC, the CUDA headers) are one of two
# extras of pyproject.toml, and exactly one is installed:
#   cuda13  where the NVIDIA driver supports CUDA 13 (nvidia-smi says
#           "CUDA Version: 13.x", driver 580 or newer);
#   cuda12  everywhere else: a CUDA 12 driver, and machines with no GPU
#           (a laptop, CI), where the kernels are still compile-checked.
# COURSE_CUDA=12 or COURSE_CUDA=13 overrides the choice. PYTHON picks the
# interpreter for a new .venv (default python3; 3.10 to 3.13).
# Usage: sh scripts/install.sh [extra ...]
#        sh scripts/install.sh --which   (print the CUDA extra it would pick, install nothing)
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${COURSE_VENV:-.venv}

cuda=${COURSE_CUDA:-}
if [ -z "$cuda" ]; then
    driver=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\)\..*/\1/p' | head -n 1) || driver=
    if [ -n "$driver" ] && [ "$driver" -ge 13 ]; then cuda=13; else cuda=12; fi
fi
case $cuda in
12) others="cupy-cuda13x cupy-cuda11x cupy" ;;
13) others="cupy-cuda12x cupy-cuda11x cupy" ;;
*) echo "COURSE_CUDA must be 12 or 13 (got '$cuda')" >&2; exit 2 ;;
esac
if [ "${1:-}" = --which ]; then
    echo "cuda$cuda"
    exit 0
fi
extras=cuda$cuda
for extra in "$@"; do extras="$extras,$extra"; done

if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        echo "The course needs Python 3.10 to 3.13; '$PYTHON' is $("$PYTHON" --version 2>&1 || echo missing)." >&2
        echo "Run again with PYTHON set to one, e.g. PYTHON=python3.12 sh $0" >&2
        exit 2
    fi
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info >= (3, 14))'; then
        echo "Note: the course is checked on Python 3.10 to 3.13; $("$PYTHON" --version) may lack some wheels." >&2
    fi
    echo "Setting up $VENV with $("$PYTHON" --version) (first run: CuPy and the Jupyter stack, a few minutes) ..."
    if ! "$PYTHON" -m venv "$VENV"; then
        rm -rf "$VENV"
        echo "'$PYTHON -m venv' failed; on Debian or Ubuntu install the venv module first," >&2
        echo "e.g. sudo apt-get install python3-venv (python3.10-venv on Ubuntu 22.04)." >&2
        exit 2
    fi
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# Two CuPy packages in one environment overwrite each other's files: drop any
# other than this machine's before installing it (a virtualenv made elsewhere).
for other in $others; do
    if "$VENV/bin/python" -m pip show --quiet "$other" >/dev/null 2>&1; then
        echo "Removing $other: this machine gets the cuda$cuda wheels."
        "$VENV/bin/python" -m pip uninstall --quiet --yes "$other"
    fi
done
echo "Installing the course with .[$extras]"
"$VENV/bin/python" -m pip install --quiet -e ".[$extras]"
