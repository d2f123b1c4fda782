"""Lessons whose kernel has not been recorded on a GPU yet, for the tests that read recordings.

Their pages say "Not recorded yet" where a recording would be shown. Recording one (for Day 86,
evidence/gemm_dev/d86_gpu.sh in one device call) makes the tests that use this set fail until its
id is taken out, so the set cannot outlive the recording.
"""

NOT_RECORDED: frozenset[str] = frozenset()

# Lessons one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key). None since
# session 14 recorded Days 88-90 on an H200 (evidence/logs/2026-12-06-h200-s14/).
NOT_RECORDED_ON: dict[str, frozenset[str]] = {}

# Timelines one GPU model lacks, by its evidence folder (course.kernel.evidence.device_key): a
# recording of one makes the tests that read this set fail until its id is taken out. Every lesson's
# timeline is kept for both models.
TIMELINE_NOT_RECORDED: dict[str, frozenset[str]] = {}


def unrecorded(model: str) -> frozenset[str]:
    """The lessons with no recording on the GPU model ``model`` (its evidence folder's name)."""
    return NOT_RECORDED | NOT_RECORDED_ON.get(model, frozenset())
