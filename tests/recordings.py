"""Lessons whose kernel has not been recorded on a GPU yet, for the tests that read recordings.

Their pages say "Not recorded yet" where a recording would be shown. Recording one (for Day 86,
evidence/gemm_dev/d86_gpu.sh in one device call) makes the tests that use this set fail until its
id is taken out, so the set cannot outlive the recording.
"""

NOT_RECORDED: frozenset[str] = frozenset()
