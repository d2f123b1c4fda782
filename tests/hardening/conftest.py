"""Hardening tests: hostile input, faults, and safe rendering.

The property tests here use the hypothesis profile ``hardening``, read by
each test through ``settings(HARDENING, max_examples=N)`` rather than
loaded globally, so the rest of the suite keeps its own settings. Under CI
(``CI`` set) the profile is derandomized: every run draws the same inputs,
so a failure in CI reproduces locally with ``CI=true``. ``deadline=None``:
the 2-core CI machine has noisy timing, and a slow example is not a bug.
Each test sets ``max_examples`` explicitly, chosen per property
(``_util.EXAMPLES`` says why each count).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

IN_CI = bool(os.environ.get("CI"))

settings.register_profile(
    "hardening",
    deadline=None,
    derandomize=IN_CI,
    # No example database: CI starts from a fresh clone, and a run here
    # must not write .hypothesis/ into the checkout.
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One folder per test module for the property tests' files.

    Not ``tmp_path_factory.mktemp`` per example: it lists the whole base
    folder to number each new one, so thousands of examples cost time
    quadratic in their number (about 10 s of the old suite). A test that
    needs a file overwrites one path here; one that needs a fresh folder
    takes ``_util.fresh_dir(scratch)`` and removes it when done.
    """
    return tmp_path_factory.mktemp("scratch")


# The root conftest.py prints these at the end of the run, added up over the
# tests (and over xdist's workers): the inputs each property really generated,
# and the other counts (how many kills ran).
GENERATED = "hardening generated inputs"
COUNTED = "hardening count"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    """Put what this test added to ``_util.RAN`` in its report."""
    from ._util import EXAMPLES, RAN

    before = Counter(RAN)
    try:
        return (yield)
    finally:
        for name, n in sorted(RAN.items()):
            if n > before[name]:
                item.user_properties.append(
                    (GENERATED if name in EXAMPLES else COUNTED, (name, n - before[name]))
                )
