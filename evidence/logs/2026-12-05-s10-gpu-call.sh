#!/bin/bash
# Session 10's GPU call (device tool), run from the repository root on the GPU machine:
#   bash evidence/logs/2026-12-05-s10-gpu-call.sh STEPS...
# STEPS: record bench86 gputests nbval. The GPU is required throughout (COURSE_REQUIRE_GPU=1) and
# the grader's sandbox too (COURSE_REQUIRE_BWRAP=1: Debian 12's bubblewrap unpacked from the
# carried .deb, the image has none). Everything lands under $OUT: log.txt, ev.tgz (the evidence
# folder this GPU's recordings went to), bench.tgz, and the pytest logs.
set -u
OUT=${OUT:-/tmp/out}
R=/tmp/r
mkdir -p "$R/ev" "$R/bench" "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/bw && dpkg -x .bwrap/bubblewrap_*.deb /tmp/bw
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 COURSE_BWRAP=/tmp/bw/usr/bin/bwrap COURSE_REQUIRE_BWRAP=1
L=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; git log -1 --oneline 2>/dev/null
  python3 -m course doctor 2>&1 | tail -14; } >> "$L" 2>&1
for s in "$@"; do
  echo "=== $s $(date -u +%H:%M:%S)" >> "$L"
  case $s in
  record)
    # Three groups side by side: the hanging experiments each wait out the sandbox's 20 s limit.
    (timeout 280 python3 -m course record day76 day78 day79 day80 --out "$R/ev" > "$R/rec1.log" 2>&1; echo "record group 1 exit $?" >> "$R/rec1.log") &
    (timeout 280 python3 -m course record day81 day82 day83 day84 --out "$R/ev" > "$R/rec2.log" 2>&1; echo "record group 2 exit $?" >> "$R/rec2.log") &
    (timeout 280 python3 -m course record day85 day86 day87 --out "$R/ev" > "$R/rec3.log" 2>&1; echo "record group 3 exit $?" >> "$R/rec3.log") &
    wait
    cat "$R"/rec1.log "$R"/rec2.log "$R"/rec3.log >> "$L"
    tar czf "$OUT/ev.tgz" -C "$R/ev" .
    ;;
  bench86)
    timeout 150 python3 -m course bench day86 --out "$R/bench" >> "$L" 2>&1; echo "bench day86 exit $?" >> "$L"
    tar czf "$OUT/bench.tgz" -C "$R/bench" .
    ;;
  gputests)
    timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/hardening/test_sandbox_hostile.py \
      -W ignore::DeprecationWarning > "$OUT/pytest-hostile.log" 2>&1
    echo "hostile gpu tests exit $?" >> "$L"; tail -8 "$OUT/pytest-hostile.log" >> "$L"
    timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests \
      --ignore=tests/hardening --ignore=tests/browser --ignore=tests/hub --ignore=tests/test_hub_pull.py \
      --ignore=tests/page/test_jupyter_contents.py -W ignore::DeprecationWarning > "$OUT/pytest-gpu.log" 2>&1
    echo "gputests exit $?" >> "$L"; tail -25 "$OUT/pytest-gpu.log" >> "$L"
    ;;
  nbval)
    timeout 200 python3 -m pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env -o addopts= notebooks \
      -W ignore::DeprecationWarning > "$OUT/nbval.log" 2>&1
    echo "nbval exit $?" >> "$L"; tail -8 "$OUT/nbval.log" >> "$L"
    ;;
  esac
done
echo "=== done $(date -u +%H:%M:%S)" >> "$L"
cat "$L"
