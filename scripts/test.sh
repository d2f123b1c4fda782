#!/bin/sh
# Set up .venv with the test extras and run the whole suite: lint, types,
# unit tests and the notebooks under nbval. On a machine without a GPU the
# GPU tests skip with a reason; COURSE_REQUIRE_GPU=1 turns that into failure.
# pytest runs in one process more than the machine has cores (pytest-xdist):
# the suite also waits (kernels starting, the browser, time-limit tests), and
# the extra process fills those waits (2 cores, 3 processes: 708 s for pytest
# on a fresh clone on 2026-12-01, with the browser, wheel, no-CuPy and hostile
# code suites; 2 and 1 processes not re-measured). --dist loadscope keeps a module (its
# module-scoped fixtures: one JupyterLab for the browser tests) and a notebook
# (nbval runs its cells in order in one kernel) in one process; the modules go
# out longest first (conftest.py orders them: the browser's, then those marked
# slow). `-n 0` among
# the extra arguments runs it all in this one process instead. A notebook's kernel may take longer than
# nbval's 60 s default to start on a busy machine (a fresh-clone run on 2 cores beside other work,
# 2026-12-07: every cell of one notebook "Kernel didn't respond in 60 seconds"): 600 s.
# Usage: sh scripts/test.sh [extra pytest arguments]
set -eu
cd "$(dirname "$0")/.."
# .venv, the course, the CUDA wheels for this machine's driver and the test tools.
sh scripts/install.sh test
.venv/bin/ruff check course tests benchmarks scripts book
.venv/bin/ruff format --check course tests benchmarks scripts book
# Python 3.10 to 3.13 without those interpreters: vermin, mypy for both ends,
# and pip resolving the dependencies for both (scripts/compat.sh). The tests
# themselves on other interpreters: scripts/test_python.sh (CI: 3.10 and 3.13).
sh scripts/compat.sh
workers=$(.venv/bin/python -c 'import os; print((os.cpu_count() or 1) + 1)')
exec .venv/bin/python -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder --nbval-lax --nbval-current-env --nbval-kernel-startup-timeout=600 "$@"
