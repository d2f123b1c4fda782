#!/bin/sh
# The course runs on Python 3.10 to 3.13; this proves it without those
# interpreters on the machine (scripts/test.sh runs it, so CI does):
#   1. vermin: no library call or syntax newer than 3.10 in course/, tests/,
#      tools/, benchmarks/ (tomllib, datetime.UTC, enum.StrEnum, except* ...);
#      code behind `if sys.version_info >= (3, 11):` counts as guarded.
#   2. mypy on course/ as Python 3.10 and as 3.13 (typeshed knows what each has).
#   3. pip resolves the dependencies for 3.10 and for 3.13 from wheels only,
#      for both CUDA extras, so a dependency that drops one of them fails here
#      (scripts/resolve.py; it needs PyPI and installs nothing).
# Usage: sh scripts/compat.sh   (COURSE_VENV=path: tools from another virtualenv)
set -eu
cd "$(dirname "$0")/.."
BIN=${COURSE_VENV:-.venv}/bin
OLDEST=3.10
NEWEST=3.13

echo "compat: vermin, minimum Python $OLDEST"
"$BIN/vermin" --target="$OLDEST-" --violations --no-tips --eval-annotations course tests tools benchmarks scripts

for v in "$OLDEST" "$NEWEST"; do
    echo "compat: mypy as Python $v"
    "$BIN/mypy" --python-version "$v" course
done

for v in "$OLDEST" "$NEWEST"; do
    for extras in test,cuda12 cuda13; do
        "$BIN/python" scripts/resolve.py "$v" "$extras"
    done
done
