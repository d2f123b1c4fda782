"""Lessons whose kernel has not been recorded on a GPU yet, for the tests that read recordings.

Their pages say "Not recorded yet" where a recording would be shown. Recording one (for Day 86,
evidence/gemm_dev/d86_gpu.sh in one device call) makes the tests that use this set fail until its
id is taken out, so the set cannot outlive the recording.
"""

NOT_RECORDED: frozenset[str] = frozenset()

# Timelines one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key). The
# H100 session of 2026-12-05 (evidence/logs/2026-12-05-h100-s10-call1.log) recorded Days 79-87;
# `python -m course timeline day78` on an H100 80GB HBM3 records Day 78's, and then the tests that
# read this set fail until day78 is taken out.
TIMELINE_NOT_RECORDED: dict[str, frozenset[str]] = {"h100-80gb-hbm3": frozenset({"day78"})}
