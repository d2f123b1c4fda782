"""Day 87's CPU models: the promotion schedule (held to the kernel's source) and the model accumulator."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons.day87 import models

LESSON = get_lesson("day87")


@pytest.mark.parametrize(
    ("k_tiles", "every", "chains"),
    [(10, 4, [4, 4, 2]), (8, 4, [4, 4]), (10, 0, [10]), (1, 1, [1]), (3, 1, [1, 1, 1]), (5, 9, [5])],
)
def test_the_chains_partition_the_k_tiles(k_tiles, every, chains):
    assert models.promotions(k_tiles, every) == chains


def test_the_schedule_is_the_kernels_rule():
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    assert "if (chain == promoteEvery && kt + 1 < p.kTiles) {" in source
    assert re.search(r"\+\+chain;", source) and "chain = 0;" in source
    assert "promote(total, acc);  // the last chain" in source


def test_a_sum_of_positive_terms_loses_accuracy_with_k_and_promotion_bounds_it():
    rng = np.random.default_rng(87)
    errors, promoted = [], []
    for k in (256, 4096, 16384):
        terms = np.abs(rng.standard_normal(k)) * np.abs(rng.standard_normal(k))
        exact = terms.sum()
        errors.append(abs(models.chain_sum(terms, 13) - exact) / exact)
        promoted.append(abs(models.chain_sum(terms, 13, every=4) - exact) / exact)
    assert errors[0] < errors[1] < errors[2] and errors[2] > 5e-3
    assert max(promoted) < 1e-3 < errors[2]
    # 53 bits is float64: the model is then exact up to float64's own rounding
    terms = np.arange(1.0, 4097.0)
    assert models.chain_sum(terms, 53) == terms.sum()


def test_bad_arguments_are_refused():
    with pytest.raises(CourseError, match="k_tiles must be >= 1"):
        models.promotions(0, 1)
    with pytest.raises(CourseError, match="bits and group"):
        models.chain_sum(np.ones(4), 0)


def test_the_scale_of_d_is_a_float32_product():
    assert models.scale_of_d(0.5, 0.25) == 0.125
    assert models.scale_of_d(1 / 3, 3.0) == float(np.float32(np.float32(1 / 3) * np.float32(3.0)))


def test_the_pages_chain_picture_draws_the_models_two_curves():
    from course.lessons.day87.figures import chain_figure
    from course.picture import Picture

    fig = chain_figure()
    assert isinstance(fig, Picture) and fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    (ax,) = fig.axes
    never, promoted = (line.get_ydata() for line in ax.get_lines())
    assert list(ax.get_lines()[0].get_xdata()) == [128 * 2**i for i in range(8)]
    # the one chain's error grows with K; the promoted sum's stays within a small factor
    assert never[-1] > 10 * never[0] and never[-1] > 10 * promoted[-1]
    assert max(promoted) < 3 * min(promoted)
