"""Lessons whose kernel has not been recorded on a GPU yet, for the tests that read recordings.

Their pages say "Not recorded yet" where a recording would be shown. Recording one (for Day 86,
evidence/gemm_dev/d86_gpu.sh in one device call) makes the tests that use this set fail until its
id is taken out, so the set cannot outlive the recording.
"""

# Day 88 (attention, branch day88k): written and compile-checked without a GPU on 2026-12-05; its
# first runs are evidence/gemm_dev/day88_gpu.sh. Day 89 (ping-pong, branch day89): the same, its
# first runs evidence/gemm_dev/day89_gpu.sh.
NOT_RECORDED: frozenset[str] = frozenset({"day88", "day89"})

# Timelines one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key): a
# recording of one makes the tests that read this set fail until its id is taken out. Every GPU
# model the course keeps has every lesson's timeline (the H100's Day 78 timeline came from the
# second call of 2026-12-05, evidence/logs/2026-12-05-h100-s10-call1.log).
TIMELINE_NOT_RECORDED: dict[str, frozenset[str]] = {}
