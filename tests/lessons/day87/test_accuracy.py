"""Day 87's accumulator model and its fit to the measured curves, on the CPU.

The model (``accuracy.aligned_chains``) is checked on sums worked by hand, against plain FP32
sums when it keeps every bit, and by its fit: curves the model itself made with a known number
of bits are fitted back to that number. The page's pieces render a recording's numbers and say
so when there is none."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course.errors import CourseError
from course.lessons.day87 import accuracy, bench, figures, records
from course.picture import Picture
from tests.lessons.day87.test_bench import _result


def _one_row(*values: float) -> np.ndarray:
    row = np.zeros(accuracy.GROUP, dtype=np.float32)
    row[: len(values)] = values
    return row[None, :]


def test_a_product_below_the_kept_bits_is_cut_off():
    tiny = 2.0**-20
    got = accuracy.aligned_chains(_one_row(1.0, tiny), bits=(14, 22), every=(0,), marks=(accuracy.GROUP,))
    assert got[0, 0, 0, 0] == 1.0  # 14 bits below 2^1 reach 2^-13: 2^-20 is lost
    assert got[1, 0, 0, 0] == 1.0 + tiny  # 22 bits reach 2^-21: kept


def test_the_cut_is_toward_zero_for_negative_values_too():
    got = accuracy.aligned_chains(
        _one_row(-1.0, -(2.0**-20)), bits=(14,), every=(0,), marks=(accuracy.GROUP,)
    )
    assert got[0, 0, 0, 0] == -1.0  # the floor would give -1 - 2^-13


def test_with_every_bit_kept_the_model_is_an_fp32_sum():
    rng = np.random.default_rng(0)
    products = rng.standard_normal((4, 8 * accuracy.GROUP)).astype(np.float32)
    got = accuracy.aligned_chains(products, bits=(60,), every=(0,), marks=(8 * accuracy.GROUP,))[0, 0, 0]
    want = products.astype(np.float64).reshape(4, 8, accuracy.GROUP).sum(axis=2)
    acc = np.zeros(4, dtype=np.float32)
    for g in range(8):
        acc = (acc.astype(np.float64) + want[:, g]).astype(np.float32)
    assert np.array_equal(got.astype(np.float32), acc)


def test_promotion_restarts_the_chain_so_a_small_product_survives():
    # a chain at 2^10 cuts a product of 2^-5 at 14 bits (2^-3 is its last kept bit); promoted
    # after the first group, the chain restarts at zero and the product is kept whole
    group = accuracy.GROUP
    products = np.zeros((1, 2 * group), dtype=np.float32)
    products[0, 0] = 2.0**10
    products[0, group] = 2.0**-5
    got = accuracy.aligned_chains(products, bits=(14,), every=(0, 1), marks=(2 * group,))
    assert got[0, 0, 0, 0] == 2.0**10
    assert got[0, 1, 0, 0] == 2.0**10 + 2.0**-5


@pytest.mark.parametrize("bits", [12, 15])
def test_the_fit_finds_the_bits_of_curves_the_model_made(bits):
    ks = bench.ACCURACY_KS
    never = bench.CURVE_KERNELS[0][0]
    model = accuracy.model_errors("uniform", (bits,), (0,), ks)[0, 0]
    fitted = accuracy.fit({"uniform": {never: list(zip(ks, model, strict=True))}})
    assert fitted is not None and fitted.bits == bits
    assert fitted.worst < 1e-9 and fitted.points == len(ks)


def test_without_the_never_promoted_curve_there_is_no_fit():
    assert accuracy.fit({"normal": {bench.CURVE_KERNELS[0][0]: [(256, 1e-3)]}}) is None


def test_bad_arguments_are_refused():
    with pytest.raises(CourseError, match="multiples of 32"):
        accuracy.aligned_chains(np.zeros((1, 48), dtype=np.float32), (14,), (0,), (48,))
    with pytest.raises(CourseError, match="dist"):
        accuracy.model_errors("cauchy", (14,), (0,))
    with pytest.raises(CourseError, match="every"):
        accuracy.promotion_choice(-1)


def _recorded(monkeypatch, result):  # type: ignore[no-untyped-def]
    accuracy._recorded.cache_clear()
    monkeypatch.setattr(accuracy, "load", lambda lesson_id, folder=None: result)
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)


def test_without_a_recording_each_piece_says_so(monkeypatch):
    _recorded(monkeypatch, None)
    assert "Not recorded yet" in str(figures.curves_figure())
    assert str(accuracy.findings()).startswith("Not recorded yet")
    choice = str(accuracy.promotion_choice(1))
    assert "Not recorded yet" in choice and "model" not in choice
    accuracy._recorded.cache_clear()


def test_with_a_recording_the_pieces_show_its_numbers(monkeypatch):
    result = _result()
    _recorded(monkeypatch, result)
    assert isinstance(figures.recorded_curves_figure.__wrapped__(), Picture)  # drawn here, not a kept one
    shown = accuracy.findings()
    text = str(shown)
    assert shown._repr_html_().count("<li>") == len(text.splitlines())
    curve = records.accuracy_curve(result)
    never = dict(curve["uniform"][bench.CURVE_KERNELS[0][0]])
    assert f"{never[bench.ACCURACY_KS[-1]]:.2e}" in text
    assert re.search(r"keeps \d+ bits", text)  # the fit's sentence
    choice = str(accuracy.promotion_choice(4))
    p4 = [r for r in records.promotion_table(result) if r.p == 4]
    assert p4 and all(f"{r.ratio:.2f}x at N = {r.n} ({r.tile})" in choice for r in p4)
    every512 = dict(curve["normal"][next(n for n, _, p in bench.CURVE_KERNELS if p == 4)])
    assert f"{every512[bench.ACCURACY_KS[-1]]:.2e}" in choice
    only_model = str(accuracy.promotion_choice(8))  # no curve, no speed recorded: the model alone
    assert "model, " in only_model and "measured, " not in only_model
    accuracy._recorded.cache_clear()


def test_the_explorer_is_a_slider_over_the_intervals():
    widgets = pytest.importorskip("ipywidgets")
    from course._live import KeyGuard, LiveBox

    box = accuracy.promotion_explorer(every=2)
    slider, shown, guard = box.children  # a LiveBox: the arrow keys move the slider, not the cells
    assert isinstance(box, LiveBox) and isinstance(guard, KeyGuard)
    assert isinstance(slider, widgets.SelectionSlider) and slider.value == 2
    assert [v for _, v in slider.options] == list(accuracy.INTERVALS_OFFERED)
    assert len(shown.outputs) == 1
    assert "every 256 of K" in shown.outputs[0]["data"]["text/plain"]
    slider.value = 4
    assert len(shown.outputs) == 1
    assert "every 512 of K" in shown.outputs[0]["data"]["text/plain"]  # the table of the interval picked


# ---- D's own FP16 rounding: the floor the curves sit on (issue 35, error 1) -------------------


@pytest.mark.parametrize("dist", accuracy.DISTS)
def test_the_floor_table_is_what_its_code_computes(dist):
    # The committed table against its code, at the smallest K (0.5 GFLOP of float64): a table typed
    # by hand, or left behind by a change to the draw, fails here.
    k = bench.ACCURACY_KS[0]
    assert accuracy.fp16_floor(dist, k) == pytest.approx(accuracy.FP16_FLOOR[dist][0], rel=1e-6)
    assert len(accuracy.FP16_FLOOR[dist]) == len(bench.ACCURACY_KS)


def test_the_floor_is_fp16_rounding_and_nothing_else():
    # FP16 keeps 11 significant bits: a round to nearest errs by at most 2^-12 relative per element,
    # so the norm-wise error lies below that; and well above FP32's rounding, which it is not.
    for dist in accuracy.DISTS:
        assert all(2.0**-24 < f < 2.0**-12 for f in accuracy.FP16_FLOOR[dist])
    assert accuracy.fp16_floor("normal", 64, mn=64) > 0
    with pytest.raises(CourseError, match="dist must be one of"):
        accuracy.fp16_floor("skewed", 256)


def test_no_measured_point_lies_below_the_floor():
    # A D stored in FP16 cannot be closer to R than R rounded to FP16 (up to the draw: the GPU's
    # inputs are not numpy's, so 5% of slack); every curve of the committed recording stays above it.
    recording = accuracy.load(accuracy.LESSON.id)
    assert recording is not None, "Day 87's recording is part of the checkout (evidence/<GPU>/bench)"
    curve = records.accuracy_curve(recording)
    assert sum(len(lines) for lines in curve.values()) == 2 * len(bench.CURVE_NAMES)
    for dist, lines in curve.items():
        floor = dict(zip(bench.ACCURACY_KS, accuracy.FP16_FLOOR[dist], strict=True))
        for name, points in lines.items():
            assert all(err > 0.95 * floor[k] for k, err in points), (dist, name)


def test_the_findings_say_the_floor_and_the_pictures_draw_it(monkeypatch):
    result = _result()
    _recorded(monkeypatch, result)
    text = str(accuracy.findings())
    k = bench.ACCURACY_KS[-1]
    for dist in accuracy.DISTS:
        assert f"{min(accuracy.FP16_FLOOR[dist]):.2e} to {max(accuracy.FP16_FLOOR[dist]):.2e}" in text
        assert f"D's own rounding alone is {accuracy.FP16_FLOOR[dist][-1]:.2e} at K = {k}" in text
    for fig in (figures.recorded_curves_figure.__wrapped__(), figures.model_figure.__wrapped__()):
        floors = [
            line for ax in fig.axes for line in ax.get_lines() if line.get_label() == figures.FLOOR_LABEL
        ]
        assert floors and all(
            list(line.get_ydata()) in [list(accuracy.FP16_FLOOR[d]) for d in accuracy.DISTS]
            for line in floors
        )
    accuracy._recorded.cache_clear()
