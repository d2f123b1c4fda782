#!/bin/bash
# One device-machine session: everything that needs a real Hopper GPU, in
# one call. The GPU is required throughout: COURSE_REQUIRE_GPU=1 makes any
# "cannot run here" a failure. Every lesson comes from the registry
# (course.lessons), so a new lesson is covered without editing this file.
#
# Usage (on the GPU machine, from the repo root):
#   bash tools/gpu_session.sh [steps...]
# steps: env nvcc sanitize pytest gputests coding cli record bench notebooks timings try faults race
#        sanitize-experiments gradebench gradephases
# gradebench takes its options from $GRADEBENCH_ARGS (default: --gpus all), e.g. "--gpus 1,all" on two GPUs.
# (default: env nvcc pytest cli record)
#
# Results land in $RES (default /tmp/results): logs, evidence/, bench/; at
# the end they are packed into $OUT/results.tgz (the device tool brings
# back at most 8 files), with the summary log beside it.
set -u
OUT=${OUT:-/tmp/out}
RES=${RES:-/tmp/results}
mkdir -p "$OUT" "$RES/evidence" "$RES/bench"
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then
    if [ ! -d /tmp/site/nbval ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    fi
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
steps=${*:-env nvcc pytest cli record}
status=0
step() { echo; echo "=== $1 ($(date -u +%H:%M:%S)) ==="; }
lessons() { python3 -c "from course.lessons import LESSONS; print(' '.join(LESSONS))"; }
kernel_of() { python3 -c "from course.lessons import get_lesson; print(get_lesson('$1').kernel_file)"; }
for s in $steps; do
case $s in
env)
    step env
    nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm --format=csv
    nvcc --version | tail -2
    python3 -c "import sys, cupy, cuda.bindings, numpy; print(sys.version); print('cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
    ;;
nvcc|sanitize)
    step "nvcc: the build line written in each kernel's header, then the program"
    mkdir -p /tmp/build
    for k in $(for l in $(lessons); do kernel_of $l; done | sort -u); do
        name=${k%.cu}
        line=$(grep -m1 '^// Build: ' kernels/$k | sed 's|^// Build: ||; s| -o [^ ]* | -o /tmp/build/'$name' |; s| '$k'$| kernels/'$k'|')
        echo "+ $line"; eval "$line" 2>&1 | grep -v "^$" || true
        [ -x /tmp/build/$name ] || { echo "BUILD FAILED: $k"; status=1; continue; }
        echo "+ ./$name"; timeout 120 /tmp/build/$name; rc=$?; echo "exit $rc"; [ $rc = 0 ] || status=1
        if [ "$s" = sanitize ]; then
            for tool in racecheck synccheck memcheck; do
                echo "+ compute-sanitizer --tool $tool ./$name"
                timeout 300 compute-sanitizer --tool $tool /tmp/build/$name 2>&1 | tail -2
            done
        fi
    done
    ;;
gputests)
    step "pytest, the GPU tests only (-m gpu), GPU required"
    python3 -m pytest -q -p no:cacheprovider -m gpu tests --ignore=tests/hardening --ignore=tests/browser \
        --ignore=tests/hub --ignore=tests/test_hub_pull.py --ignore=tests/page/test_jupyter_contents.py \
        -W ignore::DeprecationWarning 2>&1 | tee "$RES/pytest-gpu.log" | tail -30
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
coding)
    step "coding exercises on the GPU: every reference and wrong piece, and the grader (GPU required)"
    python3 -m pytest -q -p no:cacheprovider -m gpu -s tests/exercises/coding -W ignore::DeprecationWarning 2>&1 \
        | tee "$RES/coding-gpu.log" | tail -80
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
pytest)
    step "pytest, GPU required"
    # The CPU-only suites (hardening fuzz, the browser) run in CI; here, everything that touches the GPU.
    python3 -m pytest -q -p no:cacheprovider tests --ignore=tests/hardening --ignore=tests/browser \
        -W ignore::DeprecationWarning 2>&1 | tee "$RES/pytest.log" | tail -30
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
cli)
    step "python -m course doctor / run"
    python3 -m course doctor
    for l in $(lessons); do python3 -m course run "$l"; echo "course run $l: exit $?"; done
    ;;
record)
    step "python -m course record (every lesson and its experiments)"
    python3 -m course record --out "$RES/evidence" 2>&1 | tee "$RES/record.log" || status=1
    ;;
sanitize-experiments)
    step "the recorded suggested experiments (record = true), built standalone, under compute-sanitizer synccheck"
    mkdir -p /tmp/build
    python3 - <<'PY' > /tmp/build/experiments.txt
from course.lessons import LESSONS
from course.tryout.suggestions import load_suggestions
for lesson in LESSONS.values():
    for s in load_suggestions(lesson):
        if s.record:
            out = f"/tmp/build/{lesson.id}-{s.name}.cu"
            open(out, "w").write(s.source(lesson.kernel_path.read_text()))
            print(lesson.kernel_file, out)
PY
    while read -r k src; do
        name=${src%.cu}
        line=$(grep -m1 '^// Build: ' kernels/$k | sed 's|^// Build: ||; s| -o [^ ]* | -o '$name' |; s| '$k'$| '$src'|')
        echo "+ $line"; eval "$line" 2>&1 | grep -v "^$" || true
        [ -x "$name" ] || { echo "BUILD FAILED: $src"; status=1; continue; }
        echo "+ ./$(basename $name)"; timeout 120 "$name"; echo "exit $?"
        echo "+ compute-sanitizer --tool synccheck ./$(basename $name)"
        timeout 300 compute-sanitizer --tool synccheck "$name" 2>&1 | grep -v "^$" | head -40
    done < /tmp/build/experiments.txt 2>&1 | tee "$RES/sanitize-experiments.log"
    ;;
bench)
    step "python -m course bench"
    python3 -m course bench --out "$RES/bench" 2>&1 | tee "$RES/bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
gradebench)
    step "grading 300 distinct code answers: serially (a sample) and side by side (benchmarks/code_grade_bench.py)"
    # shellcheck disable=SC2086 # the options are words on purpose
    python3 benchmarks/code_grade_bench.py ${GRADEBENCH_ARGS:---gpus all} --out "$RES/gradebench.json" 2>&1 \
        | tee "$RES/gradebench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
gradephases)
    step "where a graded answer's time goes: a one-off GPU child's phases, alone and 16 at once; a worker (benchmarks/grade_phases.py)"
    python3 benchmarks/grade_phases.py --out "$RES/gradephases.json" 2>&1 | tee "$RES/gradephases.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
notebooks)
    step "nbval over the notebooks, GPU required"
    python3 -m pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env -o addopts= notebooks \
        -W ignore::DeprecationWarning 2>&1 | tee "$RES/nbval.log" | tail -15
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
timings)
    step "Run All timings per cell: cold (empty caches), again in the same kernel, fresh kernel and warm caches"
    python3 tools/time_notebooks.py --require-gpu --out "$RES/notebook_timings.json" || status=1
    ;;
try)
    step "learner experiments through the sandbox"
    [ -f tools/try_gpu_check.py ] && { python3 tools/try_gpu_check.py 2>&1 | tee "$RES/try.log"; [ "${PIPESTATUS[0]}" = 0 ] || status=1; }
    ;;
faults)
    step "fault paths"
    python3 tools/fault_paths.py 2>&1 | tee "$RES/faults.log" || status=1
    ;;
race)
    step "the wait_group race variant"
    bash tools/race_variant.sh 2>&1 | tee "$RES/day78-race.txt"
    ;;
esac
done
echo; echo "gpu_session status $status"
tar czf "$OUT/results.tgz" -C "$RES" . 2>/dev/null
exit $status
