#!/bin/sh
# Set up .venv with the test extras and run the whole suite: lint, types,
# unit tests and the notebooks under nbval. On a machine without a GPU the
# GPU tests skip with a reason; COURSE_REQUIRE_GPU=1 turns that into failure.
# pytest runs in one process per core (pytest-xdist); --dist loadscope keeps a
# module (its module-scoped fixtures: one JupyterLab for the browser tests) and
# a notebook (nbval runs its cells in order in one kernel) in one process.
# `-n 0` among the extra arguments runs it all in this process instead.
# Usage: sh scripts/test.sh [extra pytest arguments]
set -eu
cd "$(dirname "$0")/.."
# .venv, the course, the CUDA wheels for this machine's driver and the test tools.
sh scripts/install.sh test
.venv/bin/ruff check course tests benchmarks scripts
.venv/bin/ruff format --check course tests benchmarks scripts
# Python 3.10 to 3.13 without those interpreters: vermin, mypy for both ends,
# and pip resolving the dependencies for both (scripts/compat.sh).
sh scripts/compat.sh
exec .venv/bin/python -m pytest -n auto --dist loadscope --nbval-lax --nbval-current-env "$@"
