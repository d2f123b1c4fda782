"""The CPU check needs a C++ compiler: a skip with its reason on a machine without one, a failure in CI.

CI installs g++ and sets COURSE_REQUIRE_CXX=1 (``.ci/run``), so the CPU
checks cannot pass there by skipping.
"""

from __future__ import annotations

import os

import pytest

from course.exercises.coding_check import find_compiler
from course.tryout.workspace import WORKSPACE_ENV

REQUIRE_CXX_ENV = "COURSE_REQUIRE_CXX"


@pytest.fixture
def cxx() -> str:
    found = find_compiler()
    if found is None:
        reason = "no C++ compiler on PATH (c++, g++ or clang++): the CPU check cannot run"
        if os.environ.get(REQUIRE_CXX_ENV):
            pytest.fail(f"{REQUIRE_CXX_ENV} is set, but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(autouse=True)
def ws(tmp_path, monkeypatch):
    """Each test's learner files in a folder of its own."""
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    return tmp_path / "work"
