"""Variants of a kernel: its source with parts replaced by text substitution.

A benchmark removes a part to time the rest ("loads only"); an experiment
changes one line to see what breaks. Each substitution must match exactly
once (whitespace runs match any whitespace), so an edit to the kernel that
moves the text is an error naming the variant, never a silent no-op.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import CourseError


@dataclass(frozen=True)
class Substitution:
    old: str  # matched with any run of whitespace standing for any other
    new: str
    why: str


def _pattern(old: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(token) for token in old.split()))


def apply(source: str, subs: Sequence[Substitution], name: str, path: Path | None = None) -> str:
    """``source`` with each substitution applied; CourseError unless each matches exactly once."""
    out = source
    for sub in subs:
        matches = list(_pattern(sub.old).finditer(out))
        if len(matches) != 1:
            raise CourseError(
                f"variant {name!r}: the text to replace must occur exactly once in the kernel "
                f"(found {len(matches)}): {sub.old!r}. The kernel changed; update the variant to match it",
                path=path,
            )
        out = out[: matches[0].start()] + sub.new + out[matches[0].end() :]
    return out


def variant_source(
    source: str, variants: Mapping[str, Sequence[Substitution]], name: str, path: Path | None = None
) -> str:
    """``source`` with the substitutions of ``variants[name]``."""
    try:
        subs = variants[name]
    except KeyError:
        raise CourseError(f"no variant named {name!r}; the variants are: {', '.join(variants)}") from None
    return apply(source, subs, name, path)
