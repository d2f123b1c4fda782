"""Fixtures the lessons' CPU tests share."""

from __future__ import annotations

import pytest

from course.lessons import _attention_bench


@pytest.fixture
def no_gpu_release(monkeypatch):
    """The attention bench's ``finish`` run on the CPU (``tests/lessons/attention_fake.py``): its
    ``engine.release()`` frees CuPy's pools on the GPU, here a no-op."""
    monkeypatch.setattr(_attention_bench.engine, "release", lambda: None)
