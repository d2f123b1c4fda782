"""Day 86's test fixtures."""

from __future__ import annotations

import pytest

from course.lessons.day86 import chooser


@pytest.fixture
def cluster_launch_kernel(monkeypatch):
    """The chooser's model of the kernel before session 18, when every build had a cluster launch: what the
    H100's measurements up to session 17 timed. No plain-grid saving, and the cluster-1 efficiencies of the time
    (128 x 200's too); none of session 21's terms (the cluster along N, the odd-K rate). What the plain-grid
    kernel's picks measured is test_chooser_sweep.py's (session 19's refit) and test_clustern39.py's (21's)."""
    monkeypatch.setattr(chooser, "PLAIN_GRID_SAVES_US", 0.0)
    monkeypatch.setitem(chooser.EFFICIENCY, (256, 1), 0.96)
    monkeypatch.setitem(chooser.EFFICIENCY, (128, 1), 0.83)
    monkeypatch.setitem(chooser.EFFICIENCY, (200, 1), 0.78)
    monkeypatch.setattr(chooser, "ALONG_N", {})
    monkeypatch.setattr(chooser, "ODD_K", 1.0)
