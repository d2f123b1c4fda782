"""The ladder's shared host: the lesson run's host-side check mirrors the C++ program's checkD."""

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from course.bench.spec import bench_spec
from course.kernel.host import host_of
from course.lessons._ladder import SAMPLE_ROWS, TmaGemmWorkload


@pytest.fixture
def host_arrays(monkeypatch):
    # The check copies the GPU arrays back with cupy.asnumpy: NumPy arrays stand in here.
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(asnumpy=np.asarray))


def _workload(n: int) -> TmaGemmWorkload:
    rng = np.random.default_rng(n)
    work = object.__new__(TmaGemmWorkload)
    work.n, work.tolerance, work.floor = n, 2e-3, 1.0
    a = rng.integers(-8, 9, (n, n)).astype(np.float16) / np.float16(8)
    b = rng.integers(-8, 9, (n, n)).astype(np.float16) / np.float16(8)
    work.a, work.b = a[None], b[None]
    work.d = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float16)[None]
    return work


def test_small_sizes_check_every_element(host_arrays):
    work = _workload(256)
    assert work.host_check().passed and work.host_check().total == 256 * 256
    work.d[0, 200, 3] += np.float16(4)
    c = work.host_check()
    assert not c.passed and (c.mismatch.row, c.mismatch.col) == (200, 3)


def test_large_sizes_check_sampled_rows_and_every_element_for_the_poison(host_arrays):
    n = 2048
    work = _workload(n)
    assert work.host_check().passed
    step = n // SAMPLE_ROWS
    rows = [i * step + (i * 37) % step for i in range(SAMPLE_ROWS)]
    wrong_row = rows[77]
    work.d[0, wrong_row, 1000] += np.float16(8)
    c = work.host_check()
    assert not c.passed and (c.mismatch.row, c.mismatch.col) == (wrong_row, 1000)
    assert c.mismatch.index == wrong_row * n + 1000
    work = _workload(n)
    unsampled = next(r for r in range(n) if r not in rows)
    work.d[0, unsampled, 5] = np.float16("nan")  # a tile nobody wrote still holds the poison
    c = work.host_check()
    assert not c.passed and (c.mismatch.row, c.mismatch.col) == (unsampled, 5)


def test_the_sampled_rows_are_the_c_programs():
    from course.lessons import LESSONS

    text = next(
        lesson for lesson in LESSONS.values() if lesson.previous and bench_spec(lesson)
    ).kernel_path.read_text()
    assert "const int sampleRows = kDim <= 1024 ? kDim : 128;" in text
    assert "const int m = i * rowStep + (rowStep > 1 ? (i * 37) % rowStep : 0);" in text
    assert SAMPLE_ROWS == 128


def test_an_unwritten_element_makes_a_fail_line_that_says_so(host_arrays):
    """The H200 caught this: a NaN-poison mismatch has no relative error, and fail_line crashed on it."""
    from course.lessons import LESSONS
    from course.lessons._ladder import TmaGemmHost

    work = _workload(2048)
    work.d[0, 9, 7] = np.float16("nan")
    check = work.host_check()
    lesson = next(lesson for lesson in LESSONS.values() if isinstance(host_of(lesson), TmaGemmHost))
    line = host_of(lesson).fail_line(check)
    assert line.startswith("FAIL at D[9][7]: never written") and "1 of 4194304 elements unwritten" in line


def test_the_sandbox_compiles_at_the_size_the_lesson_runs(monkeypatch, tmp_path):
    """The H200 caught this too: the sandbox built Days 82-85 at the file's default size, the run used 4096."""
    from course.kernel import compile, gate
    from course.lessons import LESSONS
    from course.tryout import _child as _sandbox_child

    lesson = next(lesson for lesson in LESSONS.values() if lesson.run_defines)
    seen = {}

    def fake_compile(lesson_, source=None, defines=None, **_):
        seen["defines"] = defines
        raise compile.CompileError(lesson_.kernel_path, (), "stop here", "")

    monkeypatch.setattr(compile, "compile_lesson", fake_compile)
    monkeypatch.setattr(gate, "verdict", lambda _l: SimpleNamespace(runs=True))
    from course._paths import repo_root

    root = repo_root()
    monkeypatch.setattr(_sandbox_child, "shadow_root", lambda *_a: root)
    monkeypatch.setenv("COURSE_ROOT", str(root))  # the child sets it; monkeypatch puts back what was there
    src = tmp_path / "k.cu"
    src.write_text(lesson.kernel_path.read_text())
    facts = _sandbox_child.run(lesson.id, src, lambda _e: None)
    assert facts["outcome"] == "compile-error"
    assert seen["defines"] == lesson.run_defines  # {size_macro: 4096}


def test_a_check_stopped_at_unwritten_elements_describes_itself(host_arrays):
    """And the sandbox child's report of it (Check.describe) crashed the same way on the H200."""
    work = _workload(2048)
    work.d[0, 9, 7] = np.float16("nan")
    assert work.host_check().describe() == "1 of 4194304 elements wrong"
