#!/bin/sh
# Set up .venv with the test extras and run the whole suite: lint, types,
# unit tests and the notebooks under nbval. On a machine without a GPU the
# GPU tests skip with a reason; COURSE_REQUIRE_GPU=1 turns that into failure.
# Usage: sh scripts/test.sh [extra pytest arguments]
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/ruff check course tests benchmarks
.venv/bin/ruff format --check course tests benchmarks
.venv/bin/mypy course
exec .venv/bin/python -m pytest --nbval-lax --nbval-current-env "$@"
