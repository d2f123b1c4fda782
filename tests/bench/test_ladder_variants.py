"""A ladder step's variants (Day 81 without setmaxnreg, Day 82 row by row) are timed interleaved
with the step as written and cuBLAS, in the same batches, and reported with their spread.

No GPU: the spec's ``finish`` runs against a stand-in context whose timer returns chosen
per-repeat times, so the arithmetic and the sentences the page renders can be stated exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from course.bench.arith import paired_ratios
from course.bench.report import findings
from course.bench.result import BenchResult, Reason
from course.bench.spec import KERNEL, Peer, bench_spec
from course.bench.timing import Samples
from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons._ladder import VARIANT_SIZES, variant_findings

from .conftest import synthetic

DAY81 = get_lesson("day81")
VARIANT = "without setmaxnreg"


class FakeWork:
    sets = 3

    def __init__(self) -> None:
        self.launched: list[tuple[int, Any]] = []

    def launch(self, j: int, compiled: Any = None) -> None:
        self.launched.append((j, compiled))


@dataclass
class FakeTimer:
    per_call: dict[str, list[float]]
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def samples_together(self, rotations):
        self.calls.append(tuple(rotations))
        for calls in rotations.values():
            calls[0]()  # each rotation's calls are real calls
        return {name: Samples(tuple(self.per_call[name]), 1, 3) for name in rotations}


@dataclass
class FakeContext:
    timer: FakeTimer
    rows: list[Any]
    sizes: tuple[int, ...] = (4096, 8192)
    lesson: Any = DAY81
    verified: list[tuple[str, ...]] = field(default_factory=list)
    compiled: list[Any] = field(default_factory=list)
    peers: tuple[Peer, ...] = (Peer("cuBLAS", lambda work, j: None),)

    def compile(self, n, source=None, defines=None):
        self.compiled.append((n, defines))
        return ("build", n, tuple(sorted((defines or {}).items())))

    def workload(self, n, compiled=None, kernel=True):
        return FakeWork()

    def verify(self, n, work, calls):
        self.verified.append(tuple(calls))
        for call, _ in calls.values():
            call(0)
        return "checked"

    def rate(self, n, ms):
        return 2 * n**3 / (ms * 1e-3) / 1e12

    def progress(self, line):
        pass


def _run(monkeypatch, variant_ms: list[float]) -> tuple[FakeContext, list[Reason]]:
    monkeypatch.setattr("course.bench.engine.release", lambda: None)
    spec = bench_spec(DAY81)
    rows = list(synthetic("day81", sizes=(4096, 8192), peers=("cuBLAS",)).rows)
    base = [1.0] * 20
    timer = FakeTimer({KERNEL: base, VARIANT: variant_ms, "cuBLAS": [0.9] * 20})
    ctx = FakeContext(timer, rows)
    extras = spec.finish(ctx)
    return ctx, list(extras.reasons)


def test_the_variant_is_timed_in_the_same_batches_as_the_step_and_cublas(monkeypatch):
    ctx, reasons = _run(monkeypatch, [1.0, 1.02, 0.98, 1.01] * 5)
    # One interleaved timing per size, holding the step as written, the variant and cuBLAS.
    assert ctx.timer.calls == [(KERNEL, VARIANT, "cuBLAS")] * len(VARIANT_SIZES)
    assert ctx.verified == [(KERNEL, VARIANT, "cuBLAS")] * len(VARIANT_SIZES)
    assert (4096, {"GEMM_SETMAXNREG": 0}) in ctx.compiled and (8192, {"GEMM_SETMAXNREG": 0}) in ctx.compiled
    mine = next(r for r in reasons if r.title == f"{VARIANT} at N=4096")
    want = paired_ratios([1.0, 1.02, 0.98, 1.01] * 5, [1.0] * 20)
    assert (mine.value, mine.low, mine.high) == pytest.approx(want)
    assert mine.unit == "x" and mine.within_noise


def test_the_page_says_within_noise_only_when_the_spread_covers_one(monkeypatch):
    _, noisy = _run(monkeypatch, [1.0, 1.03, 0.97, 1.01] * 5)
    result = replace(synthetic("day81", sizes=(4096, 8192), peers=("cuBLAS",)), reasons=tuple(noisy))
    said = [f for f in findings(DAY81, result) if f.startswith("Without setmaxnreg")]
    assert len(said) == 2 and all("within noise" in f for f in said)
    _, slower = _run(monkeypatch, [1.05, 1.08, 1.06, 1.07] * 5)  # slower in every repeat
    result = replace(result, reasons=tuple(slower))
    said = [f for f in findings(DAY81, result) if f.startswith("Without setmaxnreg")]
    ratio = 1.0 / 1.065
    assert all("within noise" not in f and "slower in every repeat" in f for f in said)
    assert all(f"{ratio:.2f}x the step as written" in f for f in said)


def test_an_old_recording_without_a_spread_says_it_cannot_tell_it_from_drift():
    result: BenchResult = synthetic("day81", sizes=(4096, 8192), peers=("cuBLAS",))
    old = Reason(f"{VARIANT} at N=4096", 490.0, "TFLOP/s", "measured", "timed alone")
    said = variant_findings(replace(result, reasons=(old,)), (VARIANT,))
    base = result.row(4096).kernel.rate
    assert said == [
        f"Without setmaxnreg at N = 4096: 490 TFLOP/s against the step as written ({490 / base:.2f}x its "
        f"{base:,.0f}), timed alone after the step in this recording, so no spread was recorded and the "
        "ratio cannot be told apart from run-to-run drift."
    ]


def test_paired_ratios_refuse_unpaired_repeats():
    with pytest.raises(CourseError, match="same number of interleaved repeats"):
        paired_ratios([1.0, 2.0], [1.0])


def test_a_ratios_spread_survives_the_json_and_an_old_reason_reads_without_one():
    import json

    from course.bench.result import result_from_dict

    spread = Reason(f"{VARIANT} at N=8192", 0.97, "x", "measured", "interleaved", 0.95, 1.01)
    result = replace(synthetic("day81", peers=("cuBLAS",)), reasons=(spread,))
    back = result_from_dict(json.loads(result.to_json()))
    assert back.reasons == (spread,) and back.reasons[0].within_noise
    data = json.loads(result.to_json())
    del data["reasons"][0]["low"], data["reasons"][0]["high"]
    assert result_from_dict(data).reasons[0].within_noise is None
