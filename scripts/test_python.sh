#!/bin/sh
# The quick tests on other interpreters: for each Python version named, a
# virtualenv .venv-X.Y (scripts/install.sh with COURSE_VENV) with the test
# extras, then the unit tests but those marked slow, browser or hub, and no
# notebooks (scripts/test.sh runs everything on the default python3). CI runs
# it for the oldest and the newest supported Python (.ci/run).
#
# Where the interpreter comes from (issue 35; only PyPI, Debian and npm are
# reachable here): the first of python X.Y on PATH that really is X.Y, pyenv's
# $PYENV_ROOT/versions/X.Y.* (this machine's image carries 3.8 to 3.13 there),
# /usr/local/bin and /usr/bin. Debian bookworm packages 3.11 only; uv's managed
# Pythons and pbs-installer download from GitHub, which cannot be reached (uv
# 0.13.9 `uv python install 3.10`: DNS error, 2026-12-05); PyPI carries no
# installable CPython. So a version found nowhere fails with what was tried.
# Usage: sh scripts/test_python.sh [--which] X.Y [X.Y ...] [-- pytest arguments (default: tests)]
#        --which: print each interpreter found and run nothing.
set -eu
cd "$(dirname "$0")/.."

which_only=
if [ "${1:-}" = --which ]; then
    which_only=1
    shift
fi
versions=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    3.[0-9] | 3.[0-9][0-9]) versions="$versions $1" ;;
    *) echo "test_python.sh: '$1' is not a Python version like 3.10" >&2; exit 2 ;;
    esac
    shift
done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- tests
if [ -z "$versions" ]; then
    echo "Usage: sh scripts/test_python.sh [--which] X.Y [X.Y ...] [-- pytest arguments]" >&2
    exit 2
fi

# find_python X.Y: print the path of a working CPython X.Y, or nothing.
find_python() {
    roots="${PYENV_ROOT:-} $(pyenv root 2>/dev/null || true) ${HOME:-/root}/.pyenv"
    for candidate in "$(command -v "python$1" 2>/dev/null || true)" \
        $(for r in $roots; do ls -d "$r/versions/$1".* 2>/dev/null; done | sort -V -r | sed "s|\$|/bin/python$1|") \
        "/usr/local/bin/python$1" "/usr/bin/python$1"; do
        [ -n "$candidate" ] && [ -x "$candidate" ] || continue
        # pyenv's shim on PATH exists but fails unless that version is selected: ask it.
        if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$1'.split('.'))))" \
            2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
}

for v in $versions; do
    python=$(find_python "$v")
    if [ -z "$python" ]; then
        echo "No Python $v found: tried python$v on PATH, pyenv's versions/$v.* (PYENV_ROOT, ~/.pyenv)," >&2
        echo "/usr/local/bin and /usr/bin. Install one (pyenv install $v, your system's python$v" >&2
        echo "package, or uv python install $v where GitHub can be reached) and run again." >&2
        exit 2
    fi
    if [ -n "$which_only" ]; then
        echo "$v $python"
        continue
    fi
    echo "test_python.sh: the quick tests on $("$python" --version) ($python) in .venv-$v"
    COURSE_VENV=".venv-$v" PYTHON="$python" sh scripts/install.sh test
    workers=$(".venv-$v/bin/python" -c 'import os; print((os.cpu_count() or 1) + 1)')
    ".venv-$v/bin/python" -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder \
        -m "not slow and not browser and not hub" "$@"
done
