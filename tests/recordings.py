"""Lessons whose kernel has not been recorded on a GPU yet, for the tests that read recordings.

Their pages say "Not recorded yet" where a recording would be shown. Recording one (for Day 86,
evidence/gemm_dev/d86_gpu.sh in one device call) makes the tests that use this set fail until its
id is taken out, so the set cannot outlive the recording.
"""

# Day 90 (the overlap inside the warpgroup, branch day90): written and compile-checked without a GPU
# on 2026-12-06; its first runs are evidence/gemm_dev/day90_gpu.sh.
NOT_RECORDED: frozenset[str] = frozenset()

# Lessons one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key): recorded
# on the H100 only. Days 88 and 89 (attention) first ran on 2026-12-06 on an H100 (the device
# calls in evidence/logs/2026-12-06-h100-s12-*); no H200 was lent after that, so their H200
# recordings wait for the next session's evidence/gemm_dev/day88_gpu.sh and day89_gpu.sh.
NOT_RECORDED_ON: dict[str, frozenset[str]] = {"h200": frozenset({"day88", "day89", "day90"})}

# Timelines one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key): a
# recording of one makes the tests that read this set fail until its id is taken out. The H200
# lacks Days 88 and 89 (NOT_RECORDED_ON above); every other lesson's timeline is kept for both.
TIMELINE_NOT_RECORDED: dict[str, frozenset[str]] = {"h200": frozenset({"day88", "day89", "day90"})}


def unrecorded(model: str) -> frozenset[str]:
    """The lessons with no recording on the GPU model ``model`` (its evidence folder's name)."""
    return NOT_RECORDED | NOT_RECORDED_ON.get(model, frozenset())
