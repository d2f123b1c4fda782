"""Every lesson's coding exercises, through the registry: the file loads, the pieces behave.

On this machine (no GPU) the CPU check is what runs: the reference piece
must match the model everywhere, and every declared wrong piece and the
starter must not. The GPU side of the same promise (the reference passes
the lesson's own check; each wrong piece gives its declared outcome) is
tests/exercises/coding/test_gpu.py, run on the H200.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from course.exercises.coding import BEGIN, END, load_coding, piece_of, splice
from course.exercises.coding_check import cpu_check
from course.lessons import LESSONS

LESSON_IDS = list(LESSONS)


def test_every_page_has_a_coding_exercise():
    missing = [lid for lid, lesson in LESSONS.items() if not load_coding(lesson)]
    assert not missing, f"pages without a coding exercise (content/coding/<id>.toml): {missing}"


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_pieces_splice_back_into_the_kernel(lesson_id):
    lesson = LESSONS[lesson_id]
    kernel = lesson.kernel_path.read_text("utf-8")
    for ex in load_coding(lesson):
        reference = ex.reference(kernel)
        spliced = splice(kernel, ex, reference)
        # The reference between the markers, and without the two marker lines it is the kernel again.
        assert piece_of(spliced, ex) == reference
        unmarked = [ln for ln in spliced.splitlines() if ln.strip() not in ex.markers()]
        assert "\n".join(unmarked) + "\n" == kernel
        assert BEGIN.format(id=ex.id) in spliced and END.format(id=ex.id) in spliced
        # The starter is not the answer, and no wrong piece is.
        assert ex.starter.strip() != reference.strip()
        assert all(w.code.strip() != reference.strip() for w in ex.wrong)
        assert {"failed-check", "fault"} <= {w.expect for w in ex.wrong}


@pytest.mark.usefixtures("cxx")
@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_cpu_check_passes_the_reference_and_fails_every_wrong_piece(lesson_id):
    lesson = LESSONS[lesson_id]
    kernel = lesson.kernel_path.read_text("utf-8")
    jobs = []
    for ex in load_coding(lesson):
        if ex.cpu is None:
            continue
        jobs.append((ex, "reference", ex.reference(kernel), True))
        jobs.append((ex, "starter", ex.starter, False))
        jobs += [(ex, f"wrong {w.name}", w.code, False) for w in ex.wrong]
    if not jobs:
        pytest.skip(f"{lesson_id}'s exercises have no CPU model: only the GPU checks them")
    with ThreadPoolExecutor(max_workers=4) as pool:  # each check is a compile and a run in child processes
        verdicts = list(pool.map(lambda job: cpu_check(lesson, job[0], job[2]), jobs))
    for (ex, what, _code, should_pass), v in zip(jobs, verdicts, strict=True):
        assert v.ran, f"{ex.id} {what}: {v.headline}"
        assert v.passed == should_pass, f"{ex.id} {what}: {v.headline}\n{v.detail}"
        if not should_pass and v.outcome == "failed-check":
            # Feedback names the case, the value and what it should have been.
            assert "for " in v.headline and "should be" in v.headline, v.headline
