#!/bin/sh
# The course runs on Python 3.10 to 3.13; this proves it without those
# interpreters on the machine (scripts/test.sh runs it, so CI does):
#   1. vermin: no library call or syntax newer than 3.10 in any Python file
#      the repository tracks (`git ls-files '*.py'`; outside a git checkout,
#      every .py file but the virtualenvs' and builds'), wherever it lies:
#      tomllib, datetime.UTC, enum.StrEnum, except* ...; code behind
#      `if sys.version_info >= (3, 11):` counts as guarded. A file vermin
#      cannot check (one it cannot parse, or whose versions it "could not
#      combine") fails the step as a violation does: vermin itself exits 0 then.
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

# The files, listed rather than named by folder, so that a file moved or added anywhere is checked.
files=$(mktemp)
trap 'rm -f "$files"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- '*.py' >"$files"
else
    find . \( -name '.venv*' -o -name build -o -name .git \) -prune -o -name '*.py' -print >"$files"
fi
count=$(wc -l <"$files")
if [ "$count" -eq 0 ]; then
    echo "compat: no Python file found to check with vermin (run from the repository)" >&2
    exit 1
fi
echo "compat: vermin, minimum Python $OLDEST, on $count Python files"
# --format parsable prints one line per violation, per file it cannot parse ("error: ...")
# and per file whose versions cannot be combined ("!3"), then one summary line that starts
# with ":::". Anything else printed, or a non-zero exit (xargs: 123), fails the step.
status=0
report=$(tr '\n' '\0' <"$files" | xargs -0 "$BIN/vermin" --target="$OLDEST-" --violations --no-tips \
    --eval-annotations --format parsable) || status=$?
problems=$(printf '%s\n' "$report" | grep -v '^:::' | grep -v '^$' || true)
if [ "$status" -ne 0 ] || [ -n "$problems" ]; then
    echo "compat: vermin cannot show that these files run on Python $OLDEST (exit $status):" >&2
    printf '%s\n' "${problems:-$report}" >&2
    echo "A line it flags is a use newer than $OLDEST, a file it cannot parse, or a construct it" >&2
    echo "cannot date ('Versions could not be combined'): rewrite it, or guard it with a version check." >&2
    exit 1
fi

for v in "$OLDEST" "$NEWEST"; do
    echo "compat: mypy as Python $v"
    "$BIN/mypy" --python-version "$v" course
done

for v in "$OLDEST" "$NEWEST"; do
    for extras in test,cuda12 cuda13; do
        "$BIN/python" scripts/resolve.py "$v" "$extras"
    done
done
