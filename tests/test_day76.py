import numpy as np
import pytest

from course import day76
from course.day76 import TileMap, first_mismatch, lesson_map, pass_line
from course.errors import TensorMapRuleError


def test_lesson_map_uses_the_kernel_constants():
    m = lesson_map()
    assert (m.width, m.height, m.box_width, m.box_height) == (256, 256, 64, 64)
    assert m.box_bytes == 16384
    m.check()


def test_pass_line_is_the_cpp_programs():
    assert pass_line(lesson_map()) == (
        "round trip: PASS. 65536 elements, 16 tiles of 64 x 64 floats, one cp.async.bulk.tensor per tile."
    )
    # and it comes from the C++ format string's arguments
    src = day76.LESSON.kernel_path.read_text()
    assert '"round trip: PASS. %zu elements, %d tiles of %d x %d "' in src


@pytest.mark.parametrize(
    "m, address, rule",
    [
        (TileMap(256, 256, 257, 64), 0, "box-dim-max"),
        (TileMap(256, 256, 64, 0), 0, "box-dim-max"),
        (TileMap(256, 256, 3, 64), 0, "box-inner-16B"),
        (TileMap(250, 256, 64, 64), 0, "stride-16B"),
        (TileMap(256, 256, 64, 64), 8, "address-16B"),
        (TileMap(0, 256, 64, 64), 0, "global-dim"),
    ],
)
def test_each_broken_rule_is_named(m, address, rule):
    with pytest.raises(TensorMapRuleError) as info:
        m.check(address)
    assert info.value.rule == rule
    assert str(info.value).startswith(rule + ": ")


def test_rules_at_their_edges_are_accepted():
    TileMap(256, 256, 256, 256).check()
    TileMap(4, 1, 4, 1).check(16)


def test_first_mismatch_names_row_column_got_and_want():
    want = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    got = want.copy()
    assert first_mismatch(got, want) is None
    got[5, 3] = 0.0
    got[6, 0] = 0.0
    m = first_mismatch(got, want)
    assert (m.index, m.row, m.col, m.got, m.want) == (43, 5, 3, 0.0, 44.0)
    assert m.line() == "round trip wrong at 43 (row 5, col 3): got 0.0, want 44.0"


def test_negative_zero_is_a_mismatch_bitwise():
    want = np.zeros(4, dtype=np.float32).reshape(1, 4)
    got = want.copy()
    got[0, 2] = -0.0
    assert first_mismatch(got, want).col == 2


@pytest.mark.gpu
@pytest.mark.hopper
def test_round_trip_on_the_gpu(day76_gpu):
    result = day76.run(progress=lambda s: None)
    assert result.passed, result.lines
    assert result.lines[-1] == pass_line(lesson_map())


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_grid_one_column_short_is_caught(day76_gpu):
    result = day76.run(grid=(3, 4), progress=lambda s: None)
    assert not result.passed
    assert (result.mismatch.row, result.mismatch.col) == (0, 192)
    assert result.mismatch.got == 0.0 and result.mismatch.want == 193.0
