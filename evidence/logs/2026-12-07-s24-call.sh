#!/bin/bash
# Session 24 (copied from session 22's, with the jobs pdllate (evidence/gemm_dev/pdllate39.py: the dependent-launch
# trigger late against early, plain and cuBLAS), ncushapes (ncu over ncu_gap.py NCU_GAP=shapes) and sanitize (pdl39_sanitize.py
# under memcheck, racecheck, synccheck; PDL_LATE passed through), arows (evidence/gemm_dev/arows39.py: decode
# shapes with an A box of 8-32 rows).
# Session 22 (copied from session 18's, with the job pdl39: evidence/gemm_dev/pdl39.py, Day 86 with
# programmatic dependent launch, checked and timed against plain launches and cuBLAS).
# Session 18 (copied from session 17's, with the job early40), device calls (H100, then H200): development builds' GPU scripts and short checks, in the order of
# $JOBS, each under its own limit and all under the call's 575 s; logs and JSON packed into
# $OUT/call.tgz (run brings back at most 8 files).
#   bn39      evidence/gemm_dev/bn39_gpu.sh          Day 86's development widths 192/160/144/96 (issue 39)
#   pover40   evidence/gemm_dev/pover40_gpu.sh       Day 87's overlapped promotion build (issue 40)
#   pstag40   evidence/gemm_dev/pstag40_gpu.sh       Day 87's staggered promotion build (issue 40, session 17)
#   early40   evidence/gemm_dev/early40_gpu.sh       Day 87's early-release promoting builds (issue 40, session 18)
#   launch40  evidence/gemm_dev/launch40_gpu.sh      cluster-1 builds as plain grids (issues 39, 40, session 18)
#   ncupipe   ncu over Day 87's items (NCU_GAP=fp8): SpeedOfLight and every metric named *gmma* (the tensor
#             pipe's activity and instructions), where the promoting build leaves the tensor pipe idle
#   n64       evidence/gemm_dev/n64fp8_gpu.sh        Day 87's 128 x 64 build for small sizes (issue 40)
#   bf16      evidence/gemm_dev/bf16attn_gpu.sh      BF16 attention builds of Days 88-90 (issues 41, 42)
#   fp8wide   evidence/gemm_dev/fp8wide_gpu.sh       the wider promoting FP8 builds (issue 40)
#   sweep39   evidence/gemm_dev/sweep39_gpu.sh       Day 86's builds at small/decode shapes (issue 39)
#   ltblock   pytest tests/bench/test_lt_fp8_gpu.py  cuBLASLt's block-scaled FP8 peer against float64
#   ncu       ncu over evidence/gemm_dev/cublas_kernels.py: cuBLAS's kernels at Day 86's shapes
#   ncufp8    the same for Day 87's items only, with the stall reasons and the GMMA pipe
#   ncusrc    Day 87's items (NCU_GAP=fp8) with SourceCounters and InstructionStats, saved as a report,
#             then its per-instruction source page (SASS) as CSV: where each build's warps stall
#   ncugap    ncu over evidence/gemm_dev/ncu_gap.py: the course's kernels and the libraries' where they trail
#   d86bench  python -m course bench day86           the shape table
#   LESSON:bench  python -m course bench LESSON
#   LESSON:3  evidence/gemm_dev/LESSON_gpu.sh 3 (Days 88-90: bench, timeline, record)
#   LESSON:gpu    pytest -m gpu tests/lessons/LESSON
#   LESSON:run    python -m course run LESSON
# run(command='rm -rf .whl; mv .whl-gpu .whl; JOBS="..." bash evidence/logs/2026-12-06-s18-call.sh',
#     carry=['.whl-gpu'], kind='nvidia-h100-x1', timeout_s=600)
# .whl-gpu (about 11 MB; excluded by .git/info/exclude) was made here, before the call, as:
#   bash ../shared/tools/offline-wheels.sh .whl-gpu
#   rm -f .whl-gpu/{jedi,debugpy,widgetsnbextension,parso}*      # not needed there; the tree's 64 MiB limit
#   for p in tomli_w anywidget psygnal nvmath-python; do           # the course's own needs the image lacks
#       python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#           --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#           --platform any -d .whl-gpu $p; done
# (session 15's call 1 went without the last line and stopped at `import tomli_w`.)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
R=/tmp/call; rm -rf "$R"; mkdir -p "$R"
JOBS=${JOBS:-"bn39 pover40"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
left() { echo $(( ${CALL_BUDGET:-575} - ($(date +%s) - T0) )); }
declare -A LIMIT=([day88]=160 [day89]=160 [day90]=160 [bf16]=300 [fp8wide]=300 [sweep39]=240 [ltblock]=90 [ncu]=120 [ncugap]=240 [ncufp8]=150 [ncusrc]=${NCUSRC_LIMIT:-200} [bn39]=${BN39_LIMIT:-320} [pover40]=250 [pstag40]=${PSTAG40_LIMIT:-280} [early40]=${EARLY40_LIMIT:-300} [launch40]=200 [ncupipe]=200 [n64]=${N64_LIMIT:-260} [d86bench]=300 [day87:bench]=240 [pdl39]=${PDL39_LIMIT:-240} [pdllate]=${PDLLATE_LIMIT:-240} [ncushapes]=150 [sanitize]=180 [arows]=200)
for job in $JOBS; do
    L=$(left); [ "$L" -lt 30 ] && { echo "$job: not run, the call's time is spent"; continue; }
    b=${LIMIT[$job]:-${LIMIT[${job%:*}]:-150}}; [ "$job" = bf16 ] && b=${BF16_LIMIT:-300}; [ "$L" -lt "$b" ] && b=$L
    o="$R/${job/:/-}"; mkdir -p "$o"
    case $job in
        bf16) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/bf16attn_gpu.sh > "$o/run.log" 2>&1 ;;
        bn39) OUT=$o BUDGET=$((b - 10)) BN39_BIN=/tmp/bn39_bin timeout -k 5 $b bash evidence/gemm_dev/bn39_gpu.sh > "$o/run.log" 2>&1 ;;
        n64) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/n64fp8_gpu.sh > "$o/run.log" 2>&1 ;;
        pstag40) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/pstag40_gpu.sh > "$o/run.log" 2>&1 ;;
        launch40) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/launch40_gpu.sh > "$o/run.log" 2>&1 ;;
        early40) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/early40_gpu.sh > "$o/run.log" 2>&1 ;;
        pover40) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/pover40_gpu.sh > "$o/run.log" 2>&1 ;;
        fp8wide) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/fp8wide_gpu.sh > "$o/run.log" 2>&1 ;;
        sweep39) OUT=$o BUDGET=$((b - 10)) timeout -k 5 $b bash evidence/gemm_dev/sweep39_gpu.sh > "$o/run.log" 2>&1 ;;
        ltblock) timeout -k 5 $b python3 -m pytest -q -p no:cacheprovider -m gpu tests/bench/test_lt_fp8_gpu.py \
                     -W ignore::DeprecationWarning > "$o/run.log" 2>&1 ;;
        ncugap) timeout -k 5 $b ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight --section WarpStateStats \
                    --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --csv --page details \
                    python3 evidence/gemm_dev/ncu_gap.py > "$o/ncu_gap.csv" 2> "$o/run.log" ;;
        ncufp8) NCU_GAP=fp8 timeout -k 5 $b ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight \
                    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
                     --csv --page details \
                    python3 evidence/gemm_dev/ncu_gap.py > "$o/ncu_fp8_stalls.csv" 2> "$o/run.log" ;;
        ncusrc) NCU_GAP=fp8 NCU_GAP_OVERLAP=1 timeout -k 5 $((b - 40)) ncu --nvtx --nvtx-include "prof/" --section SourceCounters \
                    --section InstructionStats --section SpeedOfLight --metrics smsp__inst_executed.sum \
                    --import-source no -f -o "$o/src" python3 evidence/gemm_dev/ncu_gap.py > "$o/run.log" 2>&1
                timeout -k 5 30 ncu --import "$o/src.ncu-rep" --csv --page details > "$o/details.csv" 2>> "$o/run.log"
                timeout -k 5 30 ncu --import "$o/src.ncu-rep" --csv --page source --print-source sass \
                    > "$o/source.csv" 2>> "$o/run.log"
                gzip -f "$o/source.csv" ;;
        ncupipe) NCU_GAP=fp8 NCU_GAP_OVERLAP=1 timeout -k 5 $b ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight \
                    --metrics "regex:.*gmma.*" --csv --page details \
                    python3 evidence/gemm_dev/ncu_gap.py > "$o/ncu_pipe.csv" 2> "$o/run.log" ;;
        ncu) timeout -k 5 $b ncu --section LaunchStats --metrics gpu__time_duration.sum --csv --page details \
                 python3 evidence/gemm_dev/cublas_kernels.py > "$o/cublas_kernels.csv" 2> "$o/run.log" ;;
        arows) timeout -k 5 $b python3 evidence/gemm_dev/arows39.py "$o/arows39.json" > "$o/run.log" 2>&1 ;;
        pdllate) timeout -k 5 $b python3 evidence/gemm_dev/pdllate39.py "$o/pdllate39.json" > "$o/run.log" 2>&1 ;;
        ncushapes) NCU_GAP=shapes timeout -k 5 $b ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight --section WarpStateStats \
                    --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --csv --page details \
                    python3 evidence/gemm_dev/ncu_gap.py > "$o/ncu_shapes.csv" 2> "$o/run.log" ;;
        sanitize) for t in memcheck racecheck synccheck; do
                      a=""; [ $t = memcheck ] && a="--report-api-errors no"
                      echo "== $t $a"; timeout -k 5 $((b / 3)) compute-sanitizer --tool $t $a --error-exitcode 9 \
                          python3 evidence/gemm_dev/pdl39_sanitize.py; echo "rc=$?"
                  done > "$o/run.log" 2>&1 ;;
        pdl39) timeout -k 5 $b python3 evidence/gemm_dev/pdl39.py "$o/pdl39.json" > "$o/run.log" 2>&1 ;;
        d86bench) timeout -k 5 $b python3 -m course bench day86 --out "$o" > "$o/run.log" 2>&1 ;;
        *:gpu) timeout -k 5 $b python3 -m pytest -q -p no:cacheprovider -m gpu "tests/lessons/${job%:*}" -W ignore::DeprecationWarning > "$o/run.log" 2>&1 ;;
        *:run) timeout -k 5 $b python3 -m course run "${job%:*}" > "$o/run.log" 2>&1 ;;
        *:3) OUT=$o BUDGET=$((b - 5)) timeout -k 5 $b bash evidence/gemm_dev/${job%:*}_gpu.sh 3 > "$o/run.log" 2>&1 ;;
        *:bench) timeout -k 5 $b python3 -m course bench "${job%:*}" --out "$o" > "$o/run.log" 2>&1 ;;
        *) echo "$job: no such job" ;;
    esac
    echo "$job exit $? ($(date -u +%H:%M:%S), $(left) s left)"
done
tar czf "$OUT/call.tgz" -C "$R" .
for f in "$R"/*/run.log; do echo "## $f"; grep -E "^=== |^--- |FAIL|passed|failed|Error" "$f" | tail -15; done
