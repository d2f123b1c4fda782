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


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """Say how many inputs the hardening tests really generated (and how many kills ran)."""
    from ._util import EXAMPLES, RAN

    if not RAN:
        return
    inputs = {name: RAN[name] for name in EXAMPLES if RAN[name]}
    others = {name: n for name, n in RAN.items() if name not in EXAMPLES}
    terminalreporter.write_sep("-", "hardening")
    terminalreporter.write_line(
        f"generated inputs: {sum(inputs.values())} ("
        + ", ".join(f"{name} {n}" for name, n in sorted(inputs.items()))
        + ")"
    )
    for name, n in sorted(others.items()):
        terminalreporter.write_line(f"{name}: {n}")
