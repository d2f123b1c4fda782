"""Day 86's Stream-K teaching material draws and states exactly what the schedule computes.

The page's picture and table (``figures.streamk_figure``, ``figures.streamk_plans``) come from the
schedule's transcription (``course.lessons._streamk``); the second coding exercise's model
(``models.counter_index``) gives every (CTA tile, warpgroup) its own counter, which is where the
Stream-K pieces of one tile, computed on different clusters, must meet.
"""

from __future__ import annotations

import io

import matplotlib
import pytest
from matplotlib.patches import Rectangle
from PIL import Image

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons.day86 import chooser, figures, models
from course.picture import Picture

LESSON = get_lesson("day86")


@pytest.fixture(autouse=True)
def _agg_backend():
    matplotlib.use("Agg")  # the figures never touch pyplot; nothing could open a window


# --- the coding exercise's model ------------------------------------------------------------------
def test_every_tile_and_warpgroup_has_its_own_counter():
    for tiles_m, tiles_n in ((1, 1), (8, 5), (3, 7)):
        seen = [
            models.counter_index(m, n, c, tiles_n)[1]
            for m in range(tiles_m)
            for n in range(tiles_n)
            for c in range(models.CONSUMERS)
        ]
        # a bijection onto the counters the host allocates: CTA tiles x consumers (launch contract)
        assert sorted(seen) == list(range(tiles_m * tiles_n * models.CONSUMERS))
    assert models.counter_index(2, 3, 1, 5) == (13, 13 * models.CONSUMERS + 1)
    with pytest.raises(CourseError, match="cons must be >= 0"):
        models.counter_index(0, 0, -1, 5)


def test_the_stream_k_pieces_of_a_tile_meet_on_one_counter():
    # Every piece of one cluster tile, whichever unit and cluster computed it, maps (through the
    # kernel's grouped tileCoords, models.unit_coords with no split) to the same counters, and
    # different tiles to different counters: the fixup's count can only be complete that way.
    for shape, bn, cluster in (((1000, 3000, 704), 128, 2), ((4104, 776, 1240), 128, 1)):
        s = figures.streamk_schedule(shape, 132, bn, cluster)
        c = LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_STREAMK": 1})
        tiles_m = -(-shape[0] // int(c["kBM"]))
        cluster_tiles_m = -(-tiles_m // cluster)
        tiles_n = -(-shape[1] // bn)
        by_tile: dict[int, set[tuple[int, ...]]] = {}
        for u in range(s.units):
            for pc in s.pieces(u):
                mb, nb = models.unit_coords(pc.tile, cluster_tiles_m, tiles_n, s.k_tiles, 1)[:2]
                counters = tuple(
                    models.counter_index(mb * cluster + rank, nb, cons, tiles_n)[1]
                    for rank in range(cluster)
                    for cons in range(models.CONSUMERS)
                )
                by_tile.setdefault(pc.tile, set()).add(counters)
        assert len(by_tile) == s.tiles
        assert all(len(v) == 1 for v in by_tile.values())  # one set of counters per tile
        flat = [x for v in by_tile.values() for x in next(iter(v))]
        assert len(flat) == len(set(flat))  # and no two tiles share one
        assert s.shared_tiles() > 0  # the shapes do share tiles between units


# --- the page's table -----------------------------------------------------------------------------
def test_the_plans_table_is_the_schedule_of_the_choosers_build():
    table = figures.streamk_plans(132)
    assert len(table.rows) == len(figures.STREAMK_SHAPES)
    for shape, row in zip(figures.STREAMK_SHAPES, table.rows, strict=True):
        pick = figures.streamk_build(shape, 132)  # 128-row tiles along M, not 200 (no Stream-K build)
        assert pick.bm == 128 and not pick.along_n and pick.bn != 200
        assert pick == min(
            (c for c in chooser.candidates(*shape, 132, rows64=False, along_n=False) if c.bn != 200),
            key=lambda c: (c.est_us, -c.units),
        )
        s = figures.streamk_schedule(shape, 132, pick.bn, pick.cluster)
        assert row[1] == f"128x{pick.bn} c{pick.cluster}"
        assert row[2] == f"{s.tiles} x {s.k_tiles}" and row[3] == str(s.slots)
        assert (row[5], row[6], row[7], row[9]) == tuple(
            map(str, (s.dp_tiles, s.sk_tiles, s.sk_units, s.shared_tiles()))
        )
        assert s.dp_tiles % s.slots == 0  # the hybrid's data-parallel part is whole waves
    # whole waves stay data-parallel: where the pick's tiles fill its clusters exactly, no Stream-K unit
    for shape, row in zip(figures.STREAMK_SHAPES, table.rows, strict=True):
        pick = figures.streamk_build(shape, 132)
        s = figures.streamk_schedule(shape, 132, pick.bn, pick.cluster)
        assert (row[7] == "0") == (s.sk_units == 0) and (s.tiles % s.slots != 0 or s.sk_units == 0)


# --- the page's picture ---------------------------------------------------------------------------
def bars(ax) -> list[Rectangle]:  # type: ignore[no-untyped-def]
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_the_picture_draws_every_piece_of_both_schedules():
    fig = figures.streamk_figure.__wrapped__()  # the drawing itself, not a kept rendering
    assert isinstance(fig, Picture)
    s = figures.streamk_schedule()
    unsplit, streamk = (bars(ax) for ax in fig.axes[:2])
    assert len(unsplit) == s.tiles  # split 1: one bar per tile
    pieces = [pc for c in range(s.slots) for pc in s.walk(c)]
    assert len(streamk) == len(pieces)

    # each row's bars add up to that cluster's iterations, and every Stream-K row to the same
    def row_sums(rects: list[Rectangle]) -> dict[int, float]:
        out: dict[int, float] = {}
        for r in rects:
            out[round(r.get_y() + r.get_height() / 2)] = (
                out.get(round(r.get_y() + r.get_height() / 2), 0) + r.get_width()
            )
        return out

    assert set(row_sums(streamk).values()) == {float(s.sk_per)} and s.sk_big == 0
    assert sum(row_sums(unsplit).values()) == sum(row_sums(streamk).values()) == s.tiles * s.k_tiles
    # hatched bars are exactly the pieces of shared tiles
    hatched = [r for r in streamk if r.get_hatch()]
    assert len(hatched) == sum(1 for pc in pieces if pc.segs > 1)
    assert not any(r.get_hatch() for r in unsplit)
    titles = " ".join(ax.get_title() for ax in fig.axes[:2])
    assert f"{s.shared_tiles()} tiles shared" in titles and f"{s.sk_units} units of {s.sk_per}" in titles
    data = fig.png()
    with Image.open(io.BytesIO(data)) as image:
        assert image.size[0] > 600 and image.convert("RGBA").getpixel((0, 0)) == (255, 255, 255, 255)


def test_the_picture_is_kept_under_a_key_that_names_the_schedule_and_the_kernel():
    paths = [str(p) for p in figures._streamk_sources()]
    assert any(p.endswith("_streamk.py") for p in paths) and any(p.endswith("gemm7_shapes.cu") for p in paths)
