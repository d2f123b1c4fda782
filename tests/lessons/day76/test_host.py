"""Day 76's host side (course/lessons/day76/host.py): the map main() builds, the C++
program's PASS and failure lines, the "short grid" case; and, on a Hopper
GPU, the round trip itself. (The tensor-map rules are tests/hopper/test_tensormap.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from course.errors import CourseError
from course.hopper import tensormap
from course.kernel.host import check_bits, host_of, run_lesson
from course.lessons import get_lesson
from course.lessons.day76 import host
from course.lessons.day76.host import HOST, lesson_map, pass_line

LESSON = get_lesson("day76")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")


def test_lesson_map_uses_the_kernel_constants():
    m = lesson_map()
    assert (m.width, m.height, m.box_width, m.box_height) == (256, 256, 64, 64)
    assert m.elem_bytes == 4 and m.swizzle == "none"  # float, CU_TENSOR_MAP_SWIZZLE_NONE
    assert m.box_bytes == 16384
    m.check()


def test_lesson_map_follows_a_rebuilt_size():
    m = lesson_map({LESSON.size_macro: 1024})
    assert (m.width, m.height, m.box_width, m.box_height) == (1024, 1024, 64, 64)
    assert LESSON.default_size == 256


def test_the_host_encodes_with_the_shared_tensor_map_module():
    # The page imports these from the lesson; they must be the shared ones, not copies.
    assert host.TileMap is tensormap.TileMap
    assert host.encode is tensormap.encode
    assert host.rules_table is tensormap.rules_table
    assert host_of(LESSON) is HOST


def test_pass_line_is_the_cpp_programs():
    assert pass_line(lesson_map()) == (
        "round trip: PASS. 65536 elements, 16 tiles of 64 x 64 floats, one cp.async.bulk.tensor per tile."
    )
    # and it comes from the C++ format string's arguments
    assert '"round trip: PASS. %zu elements, %d tiles of %d x %d "' in SOURCE
    assert '"floats, one cp.async.bulk.tensor per tile.\\n"' in SOURCE


def test_the_hosts_pass_line_is_for_the_size_it_ran():
    check = check_bits(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
    assert HOST.pass_line(512, check) == (
        "round trip: PASS. 262144 elements, 64 tiles of 64 x 64 floats, one cp.async.bulk.tensor per tile."
    )


def test_the_failure_line_names_row_column_got_and_want_as_the_cpp_program_does():
    want = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    got = want.copy()
    assert check_bits(got, want).mismatch is None
    assert HOST.fail_line(check_bits(got, want)) == "round trip: no mismatch"
    got[5, 3] = 0.0
    got[6, 0] = 0.0
    c = check_bits(got, want)
    assert not c.passed and c.failures == 2
    m = c.mismatch
    assert (m.index, m.row, m.col, m.got, m.want) == (43, 5, 3, 0.0, 44.0)
    assert HOST.fail_line(c) == "round trip wrong at 43 (row 5, col 3): got 0.0, want 44.0"
    assert '"round trip wrong at %zu (row %zu, col %zu): got "' in SOURCE


def test_negative_zero_is_a_mismatch_bitwise():
    want = np.zeros(4, dtype=np.float32).reshape(1, 4)
    got = want.copy()
    got[0, 2] = -0.0
    c = check_bits(got, want)
    assert c.failures == 1 and c.mismatch.col == 2


def test_the_short_grid_case_is_one_column_of_blocks_short():
    e = HOST.case("short-grid")
    m = lesson_map()
    full = (m.width // m.box_width, m.height // m.box_height)
    assert e.options == {"grid": (full[0] - 1, full[1])}
    assert not e.expect_pass
    assert set(e.options) <= set(HOST.run_options)
    with pytest.raises(
        CourseError,
        match=r"day76 has no case 'long-grid' \(its cases: short-grid, over-the-edge\)",
    ):
        HOST.case("long-grid")


def test_the_over_the_edge_case_shrinks_the_map_not_the_buffers():
    e = HOST.case("over-the-edge")
    width, height = e.options["valid"]
    m = lesson_map()
    assert width < m.width and height < m.height and not e.expect_pass
    # Boxes start at multiples of the tile; the last column of boxes must hang over the new edge.
    assert (m.width // m.box_width - 1) * m.box_width < width < m.width
    assert set(e.options) <= set(HOST.run_options)


def test_an_unknown_run_option_is_refused_before_the_gpu_is_touched():
    with pytest.raises(
        CourseError,
        match=r"day76 has no run option\(s\) \['block'\] \(its options: grid, shared_mem, valid\)",
    ):
        run_lesson(LESSON, progress=lambda line: None, block=(128,))


# --- on a Hopper GPU -------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.hopper
def test_round_trip_on_the_gpu(day76_gpu):
    result = run_lesson(LESSON, progress=lambda line: None)
    assert result.passed, result.lines
    assert result.lesson_id == "day76"
    assert result.lines[-1] == pass_line(lesson_map())
    assert result.check.kind == "bits" and result.check.total == 256 * 256


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_grid_one_column_short_is_caught(day76_gpu):
    e = HOST.case("short-grid")
    result = run_lesson(LESSON, progress=lambda line: None, **e.options)
    assert result.passed == e.expect_pass is False
    assert (result.mismatch.row, result.mismatch.col) == (0, 192)
    assert result.mismatch.got == 0.0 and result.mismatch.want == 193.0
    assert result.check.failures == 256 * 64  # the whole last column of tiles
    assert result.lines[-1] == "round trip wrong at 192 (row 0, col 192): got 0.0, want 193.0"
