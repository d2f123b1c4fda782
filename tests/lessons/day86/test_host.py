"""Day 86's host side on the CPU: shapes refused before launch, the launch contract's arithmetic."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons._ladder import Problem, check_shape, ragged_problem
from course.lessons.day86 import chooser
from course.lessons.day86.host import HOST, RUN_SHAPE, RUN_SPLIT, build_of
from course.quiz.loader import load_quiz

LESSON = get_lesson("day86")
C = LESSON.constants()


@pytest.mark.parametrize(
    ("shape", "named"),
    [((1000, 1030, 520), "N = 1030"), ((1000, 1032, 522), "K = 522"), ((8, 12, 20), "N = 12 and K = 20")],
)
def test_a_stride_that_breaks_the_16_byte_rule_is_refused_naming_it(shape, named):
    with pytest.raises(CourseError) as e:
        check_shape(*shape, int(C["kMinMultiple"]))
    text = str(e.value)
    assert named in text and "16 bytes" in text and "stride-16B" in text and "refused before launch" in text


@pytest.mark.parametrize("shape", [(0, 8, 8), (-1, 8, 8), (8, 0, 8), (8, 8, 0)])
def test_an_empty_or_negative_side_is_refused(shape):
    with pytest.raises(CourseError, match="positive integer"):
        check_shape(*shape, 8)


def test_m_and_small_n_k_are_fine():
    for shape in [(1, 8, 8), (1001, 1032, 520), (1, 8, 1000), (4096, 4096, 8)]:
        check_shape(*shape, 8)


def test_the_quiz_refusal_question_matches_the_host():
    q = load_quiz(LESSON.quiz_path).question("refused")
    shapes = {
        "one-row": (1, 8, 1000),
        "odd-m": (1001, 1032, 520),
        "odd-n": (1000, 1030, 520),
        "short-k": (4096, 4096, 8),
    }
    refused = set()
    for option, shape in shapes.items():
        try:
            check_shape(*shape, 8)
        except CourseError:
            refused.add(option)
    assert refused == {q.answer}


def test_the_split_must_fit_the_k_tiles():
    with pytest.raises(CourseError, match="split must be 1 to 9"):
        ragged_problem(C, (1000, 1032, 520), 10)
    with pytest.raises(CourseError, match="split must be 1 to"):
        ragged_problem(C, (1000, 1032, 520), 0)


def test_the_launch_contract_of_the_run_shape():
    p = ragged_problem(C, RUN_SHAPE, 3)
    # header: units = ceil(ceil(M/kBM)/kClusterM) * ceil(N/kBN) * splitK
    assert (p.cluster_tiles_m, p.tiles_n, p.k_tiles) == (4, 5, 9)
    assert p.units == 60
    assert p.grid(132) == 120  # at most one CTA per SM, at most one cluster per unit
    assert p.grid(16) == 16
    assert p.cta_tiles == 40
    assert p.workspace_floats == 40 * 3 * 128 * 256
    assert p.counters == 40 * 2
    one = ragged_problem(C, RUN_SHAPE, 1)
    assert (one.workspace_floats, one.counters) == (0, 0)


def test_a_cluster_rounds_tile_rows_up():
    c1 = LESSON.constants({"GEMM_BN": 128, "GEMM_CLUSTER": 1})
    p = ragged_problem(c1, (130, 392, 1096), 1)
    assert isinstance(p, Problem)
    assert (p.cluster_tiles_m, p.tiles_n, p.cta_tiles) == (2, 4, 8)
    p2 = ragged_problem(C, (130, 392, 1096), 1)
    assert (p2.cluster_tiles_m, p2.tiles_n, p2.cta_tiles) == (1, 2, 4)


def test_the_build_is_read_from_the_compile_flags():
    class Options:
        defines = (("GEMM_BN", "128"), ("GEMM_CLUSTER", "1"))

    class Compiled:
        options = Options()

    assert build_of(Compiled()) == (128, 1, False)  # type: ignore[arg-type]
    assert build_of(None) == (256, 2, False)

    class AlongN:
        defines = (("GEMM_BN", "200"), ("GEMM_CLUSTER", "1"), ("GEMM_CLUSTER_N", "2"))

    Compiled.options = AlongN()  # type: ignore[assignment]
    assert build_of(Compiled()) == (200, 2, True)  # type: ignore[arg-type]


def test_the_host_declares_its_run_options_and_cases():
    assert set(HOST.run_options) == {"shape", "split", "deterministic"}
    for e in HOST.cases:
        assert set(e.options) <= set(HOST.run_options)
        if "shape" in e.options:
            check_shape(*e.options["shape"], 8)
    # The run splits K (so its reduction runs); the chooser, pricing the reduction, would not here.
    assert RUN_SPLIT == 3 and chooser.best_for(*RUN_SHAPE, 132, 256, 2).split == 1
    assert [e.options for e in HOST.cases if e.name == "no-split"] == [{"split": 1}]  # the run without it


def test_a_stream_k_build_is_recognised_from_its_flags():
    from course.lessons.day86.host import is_streamk

    class Options:
        defines = (("GEMM_BN", "128"), ("GEMM_STREAMK", "1"))

    class Compiled:
        options = Options()

    class Plain:
        options = type("O", (), {"defines": (("GEMM_BN", "128"),)})()

    assert is_streamk(Compiled())  # type: ignore[arg-type]
    assert not is_streamk(Plain())  # type: ignore[arg-type]
    assert not is_streamk(None)


def test_the_small_build_launches_two_ctas_an_sm_and_is_recognised_from_its_flags():
    from course.lessons.day86.host import rows_of

    flags = {"GEMM_SMALL": 1, "GEMM_BM": 64, "GEMM_CLUSTER": 1, "GEMM_BN": 64}

    class Compiled:
        options = type("O", (), {"defines": tuple((k, str(v)) for k, v in flags.items())})()

    assert rows_of(Compiled()) == (64, True) and rows_of(None) == (128, False)  # type: ignore[arg-type]
    small = LESSON.constants(flags)
    assert small["kCtasPerSm"] == 2 and C["kCtasPerSm"] == 1
    # two CTAs an SM, at most one per unit: 64 x 64 tiles of 1024 x 1024 are 256 units
    p = ragged_problem(small, (1024, 1024, 1024), 1)
    assert (p.ctas_per_sm, p.units, p.grid(132), p.grid(8)) == (2, 256, 256, 16)
    assert ragged_problem(small, (256, 256, 256), 1).grid(132) == 16
    # every other build: one an SM, as before
    assert ragged_problem(C, (1024, 1024, 1024), 1).grid(132) == 8 * 4  # 128 x 256 tiles
    big = ragged_problem(C, (8192, 8192, 8192), 1)
    assert (big.ctas_per_sm, big.grid(132)) == (1, 132)


def test_a_short_a_box_is_read_from_its_flags_and_refused_where_m_outgrows_it():
    # -DGEMM_A_ROWS (decode, session 24): the A box is 8 rows, the TMA expects that many bytes a stage,
    # and the host refuses a shape whose M rows would not all load, before any GPU work.
    from course.lessons.day86.host import a_rows_of

    flags = {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_A_ROWS": 8}

    class Compiled:
        options = type("O", (), {"defines": tuple((k, str(v)) for k, v in flags.items())})()

    c = LESSON.constants(flags)
    assert (c["kBoxARows"], c["kTxBytes"], c["kStageBytes"]) == (8, 8 * 128 + 64 * 128, 64 * 128 * 2)
    plain = LESSON.constants({k: v for k, v in flags.items() if k != "GEMM_A_ROWS"})
    assert (plain["kBoxARows"], plain["kTxBytes"]) == (64, plain["kStageBytes"])
    assert a_rows_of(Compiled()) == 8 and a_rows_of(None) == 0  # type: ignore[arg-type]
    with pytest.raises(CourseError, match=r"loads 8 rows of A .* M is 9: rows 8 to 8 would never be loaded"):
        HOST.workload(Compiled(), 9, 1, "bench", shape=(9, 64, 64))  # type: ignore[arg-type]
    with pytest.raises(CourseError, match="M is 1000"):  # the lesson's own run shape
        HOST.workload(Compiled(), 1000)  # type: ignore[arg-type]
