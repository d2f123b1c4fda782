#!/bin/bash
# One device-machine session: everything that needs a real Hopper GPU, in
# one call, with logs under $OUT. The GPU is required throughout:
# COURSE_REQUIRE_GPU=1 makes any "cannot run here" a failure.
# Usage (on the GPU machine, from the repo root): bash tools/gpu_session.sh [steps...]
#   steps: env nvcc pytest cli record notebooks bench race faults (default: env nvcc pytest cli record)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site:$PWD || exit 1
else
    export PYTHONPATH=$PWD
fi
steps=${*:-env nvcc pytest cli record}
status=0
step() { echo; echo "=== $1 ==="; }
for s in $steps; do
case $s in
env)
    step env
    nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
    nvcc --version | tail -2
    python3 -c "import sys, cupy, cuda.bindings, numpy; print(sys.version); print('cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
    ;;
nvcc)
    step "nvcc: the build lines written in the kernel headers"
    mkdir -p /tmp/build
    for k in tma_tile wgmma_gemm; do
        line=$(grep -m1 '^// Build: ' kernels/$k.cu | sed 's|^// Build: ||; s| -o [^ ]* | -o /tmp/build/'$k' |; s| '$k'.cu$| kernels/'$k'.cu|')
        echo "+ $line"; eval "$line" || status=1
        echo "+ ./$k"; /tmp/build/$k; rc=$?; echo "exit $rc"; [ $rc = 0 ] || status=1
    done
    echo "+ compute-sanitizer --tool racecheck ./wgmma_gemm"
    compute-sanitizer --tool racecheck /tmp/build/wgmma_gemm 2>&1 | tail -3
    echo "+ compute-sanitizer --tool memcheck ./tma_tile"
    compute-sanitizer --tool memcheck /tmp/build/tma_tile 2>&1 | tail -3
    ;;
pytest)
    step "pytest, GPU required"
    # The CPU-only suites (hardening fuzz, the browser) run in CI; here, everything that touches the GPU.
    python3 -m pytest -q -p no:cacheprovider tests --ignore=tests/hardening --ignore=tests/browser -W ignore::DeprecationWarning 2>&1 | tee "$OUT/pytest.log" | tail -25
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
cli)
    step "python -m course doctor / run"
    python3 -m course doctor --compile
    python3 -m course run day76; echo "exit $?"
    python3 -m course run day78; echo "exit $?"
    ;;
record)
    step "python -m course record"
    mkdir -p "$OUT/evidence"
    python3 -m course record --out "$OUT/evidence" || status=1
    ;;
notebooks)
    step "nbval over the notebooks, GPU required"
    python3 -m pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env notebooks -W ignore::DeprecationWarning 2>&1 | tee "$OUT/nbval.log" | tail -15
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    step "Run All timings, cold and warm kernel cache"
    python3 tools/time_notebooks.py --out "$OUT/notebook_timings.json" || status=1
    ;;
bench)
    step "python -m course bench"
    python3 -m course bench --out "$OUT" || status=1
    ;;
race)
    step "the wait_group race variant"
    bash tools/race_variant.sh 2>&1 | tee evidence/day78-race.txt "$OUT/day78-race.txt"
    ;;
faults)
    step "fault paths"
    python3 tools/fault_paths.py 2>&1 | tee "$OUT/faults.log" || status=1
    ;;
esac
done
echo; echo "gpu_session status $status"
exit $status
