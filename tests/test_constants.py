"""The kernels' constants read from their source: literals, macros, and integer expressions."""

from __future__ import annotations

from course.constants import kernel_constants


def test_integer_expressions_over_earlier_constants_and_macros(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(
        "#ifndef TILE\n#define TILE 256\n#endif\n"
        "constexpr int kBN = TILE;\n"
        "constexpr int kCluster = 2;\n"
        "constexpr int kRows = kBN / kCluster;  // a comment\n"
        "constexpr int kBytes = (kBN + 16) * 64 * 2;\n"
        "constexpr int kNeg = -7 / 2;\n"
        "constexpr int kMod = -7 % 3;\n"
        "constexpr int kUnknown = kMissing * 2;\n"
        "constexpr int kCall = std::max(1, 2);\n"
        "constexpr double kTol = 2e-3;\n"
        "constexpr int kZero = kBN / 0;\n"
    )
    c = kernel_constants(f)
    assert (c["kBN"], c["kRows"], c["kBytes"]) == (256, 128, 272 * 128)
    assert (c["kNeg"], c["kMod"]) == (-3, -1)  # C++ truncates toward zero
    assert "kUnknown" not in c and "kCall" not in c and "kZero" not in c
    assert c["kTol"] == 2e-3
    assert kernel_constants(f, {"TILE": 128})["kRows"] == 64


def test_day86s_builds_read_their_ring_and_boxes():
    from course.lessons import get_lesson  # the registry, only for this kernel's check

    lesson = get_lesson("day86")
    for bn, cluster, stages in ((256, 2, 4), (256, 1, 4), (128, 2, 6), (128, 1, 6)):
        c = lesson.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
        assert (c["kStages"], c["kBoxBRows"]) == (stages, bn // cluster)
        assert c["kStages"] * c["kStageBytes"] == c["kRingBytes"]


def test_a_choice_on_a_build_flag_takes_the_branch_the_flag_picks(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(
        "#ifndef BF16\n#define BF16 0\n#endif\n"
        "constexpr int kBf16 = BF16;\n"
        "constexpr double kTol = kBf16 ? 3.2e-2 : 4e-3;\n"
        "constexpr int kRows = BF16 ? 64 : 128 / 2 * 4;\n"
        "constexpr int kOdd = kMissing ? 1 : 2;\n"
        "constexpr int kNested = kBf16 ? 1 : kBf16 ? 2 : 3;\n"
    )
    c = kernel_constants(f)
    assert (c["kTol"], c["kRows"]) == (4e-3, 256)
    assert "kOdd" not in c and "kNested" not in c  # an unknown condition, a nested choice: left out
    b = kernel_constants(f, {"BF16": 1})
    assert (b["kTol"], b["kRows"]) == (3.2e-2, 64)
