"""The proposed page text (course/lessons/day88/PAGE.md) quotes only numbers the models compute
or the sources define: each computed one is recomputed here, and any other number fails."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from course.hopper import wgmma as w
from course.lessons.day88 import figures, fragments
from course.lessons.day88 import softmax as sm

PAGE = (Path(sm.__file__).parent / "PAGE.md").read_text("utf-8")
FLOWING = " ".join(PAGE.split())  # the text with its line breaks as spaces
TOKEN = re.compile(r"\d+(?:\.\d+)*(?:e-?\d+)?%?")


def computed() -> dict[str, str]:
    """Each number the text quotes that a model computes: what it says, as the text writes it."""
    walk = figures.figure_walk()
    out = {
        "rescale at the jump": f"is {walk.rescale[5, 2]:.2g},",
        "l before and after": f"falls from {walk.ell[4, 2]:.2f} to {walk.ell[5, 2]:.2f}",
        "float64 overflow": f"past {math.log(np.finfo(np.float64).max):.2f} in float64",
        "FP32 overflow": f"past {math.log(np.finfo(np.float32).max):.2f} in FP32",
        "registers of S": f"holds {64 * 128 // w.WARPGROUP} FP32 registers of S",
        "registers of P": f"P takes {fragments.pack_p(np.zeros((128, 64), np.float32)).size // 128} registers",
        "values per step": f"{w.A_REGISTER_VALUES} FP16 values per k16 step, {128 // fragments.K_STEP} steps",
        "extra causal work": (
            f"{(sm.causal_tiles(4096, 128).visited / (sm.causal_tiles(4096, 128).total / 2) - 1) * 100:.1f}% more work"
        ),
    }
    for seq in (4096, 8192, 16384):
        c = sm.causal_tiles(seq, 128)
        out[f"tiles at {seq}"] = (
            f"| {seq} | {c.visited} of {c.total} | {100 * float(c.fraction):.1f}% | {c.masked} |"
        )
    return out


def test_every_computed_number_is_quoted_as_the_model_computes_it():
    for name, text in computed().items():
        assert text in FLOWING, (name, text)


def test_the_walk_it_describes_holds():
    walk = figures.figure_walk()
    assert np.argmin(walk.rescale[:, 2]) == 5  # "row 2 has one large score in block 5"
    assert (walk.rescale[1:, 3] == 1).all()  # "row 3 ... is never rescaled"
    assert (np.diff(walk.m, axis=0) >= 0).all()  # "the running max only grows"
    assert fragments.layout_mismatches(256) == [] and fragments.layout_mismatches(16) == []


def test_no_other_number_is_quoted():
    # Definitions (tile and fragment sizes, D, the keys and blocks of the figure, its rows and
    # thread, a0..a7, Day 88), citations (arXiv numbers, sections) and the tolerance the tests use.
    defined = {
        "0", "1", "2", "3", "4", "5", "7", "8", "88", "16", "32", "64", "90", "128", "256", "1024",
        "4096", "8192", "16384", "1e-12", "3.1.1", "3.3",
        "2307.08691", "1805.02867", "2407.08608",
    }  # fmt: skip
    quoted = set()
    for text in computed().values():
        quoted |= set(TOKEN.findall(text))
    unknown = sorted(set(TOKEN.findall(PAGE)) - defined - quoted)
    assert unknown == [], unknown
