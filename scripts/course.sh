#!/bin/sh
# Set up the course in .venv (first run only) and open JupyterLab on notebooks/.
# Usage: sh scripts/course.sh [extra jupyter lab arguments]
# JupyterLab serves the nearest folder that holds both this checkout and your
# workspace (~/hopper-course-work, or COURSE_WORKSPACE), usually your home
# folder, so the links on the pages open your files in JupyterLab's editor;
# it opens on this checkout's notebooks/ folder.
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
root=$(.venv/bin/python -c 'from course.tryout.workspace import served_root; print(served_root())')
notebooks=$(.venv/bin/python -c 'from course.tryout.workspace import served_url; print(served_url("notebooks"))')
# The contents manager that opens a page unmodified (course/page/jupyter_contents.py).
options=$(.venv/bin/python -c 'from course.page.jupyter_contents import served_options; print(" ".join(served_options()))')
echo "JupyterLab serves $root; the course's pages are in $(pwd -P)/notebooks"
# The address of the pages: JupyterLab's port (8888 unless --port or --ServerApp.port says
# otherwise; JupyterLab takes the next free one when it is busy, and prints the address it
# took, with its token, below). On a cloud GPU, see "On a cloud GPU" in book/learners/start.md.
port=8888
for arg in "$@"; do
    case $arg in
        --port=*|--ServerApp.port=*) port=${arg#*=} ;;
    esac
done
echo "The pages: http://localhost:$port$notebooks (add ?token=... as JupyterLab prints it below)"
if [ "$root" = / ]; then
    echo "(the checkout and the workspace share no folder but /: COURSE_WORKSPACE=$(dirname "$(pwd -P)")/hopper-course-work would serve $(dirname "$(pwd -P)")"
fi
# shellcheck disable=SC2086  # $options: words without spaces, one option each
exec .venv/bin/jupyter lab --ServerApp.root_dir="$root" --LabApp.default_url="$notebooks" $options "$@"
