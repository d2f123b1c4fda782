"""course/bench/engine.py, spec.py and peers.py: what a lesson declares, and measuring it.

The measuring path runs end to end on the simulated GPU of conftest.py
(correct first, then timed, interleaved with the peers); on the lesson's
real GPU, one small run per lesson (no timing assertions).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from course.bench import KERNEL, MIN_REPEATS, load, measure, spec_of, write
from course.bench.arith import ROTATION_FACTOR, copy_bytes, gemm_flops, rotation_buffers
from course.bench.engine import occupancy, size_defines
from course.bench.peers import Cublas, device_copy
from course.bench.spec import bench_spec
from course.bench.timing import MAX_CALLS_PER_REPEAT
from course.errors import CheckFailed, CourseError, EnvironmentProblem
from course.kernel import gate
from course.kernel.host import check_bits, check_relative
from course.lessons import LESSONS, get_lesson
from course.lessons.day76 import bench as day76_bench
from course.lessons.day78 import bench as day78_bench

from .conftest import (
    ADD_GB_S,
    BENCHED,
    COPY_GB_S,
    CUBLAS_TFLOP_S,
    KERNEL_RATE,
    L2_BYTES,
    SIM_GPU,
    VARIANT_SHARE,
    Kernel,
    SimCompiled,
    device,
    peer_names,
)

# -- what a lesson declares ---------------------------------------------------------


def test_spec_of_a_lesson_without_a_benchmark_says_where_one_is_declared():
    bare = dataclasses.replace(get_lesson(BENCHED[0]), id="day99", package="")
    assert bench_spec(bare) is None
    with pytest.raises(CourseError, match=r"no benchmark for lesson 'day99': its package's bench.py would "):
        spec_of(bare)


def test_every_lesson_with_a_bench_module_has_a_spec():
    assert BENCHED, "no lesson declares a BenchSpec"
    for lesson_id in BENCHED:
        assert spec_of(get_lesson(lesson_id)) is bench_spec(get_lesson(lesson_id))


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_no_define_at_the_lessons_own_size(lesson_id):
    # At its own size the benchmark compiles exactly what the lesson run compiles: one compile cache entry.
    lesson = get_lesson(lesson_id)
    if not lesson.size_macro:  # the size is a run-time argument: one build serves every size
        assert lesson.run_defines is None
        assert [size_defines(lesson, n) for n in (lesson.size, 64, 2 * lesson.size)] == [None] * 3
        return
    own = lesson.default_size
    assert own == lesson.constants()[lesson.size_constant]
    assert size_defines(lesson, lesson.size) == lesson.run_defines
    if not lesson.run_size:
        assert size_defines(lesson, own) is None
    assert size_defines(lesson, 2 * lesson.size) == {lesson.size_macro: 2 * lesson.size}
    assert size_defines(lesson, 64) == {lesson.size_macro: 64}


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_a_specs_sizes_are_valid_for_its_kernel(lesson_id):
    spec = spec_of(get_lesson(lesson_id))
    assert spec.validate_sizes(lesson_id, spec.sizes) == spec.sizes  # sorted, no repeats
    assert spec.validate_sizes(lesson_id, spec.page_sizes) == spec.page_sizes
    assert set(spec.page_sizes) <= set(spec.sizes)  # the page's quick run is comparable with the record
    assert spec.unit in ("GB/s", "TFLOP/s") and spec.kernel_label
    for n in spec.sizes:
        assert spec.work(n) > 0 and spec.set_bytes(n) > 0


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_validate_sizes_refuses_what_the_kernel_cannot_be_built_for(lesson_id):
    spec = spec_of(get_lesson(lesson_id))
    step = spec.size_step
    assert spec.validate_sizes(lesson_id, [2 * step, step, 2 * step]) == (step, 2 * step)
    assert spec.validate_sizes(lesson_id, [spec.max_size]) == (spec.max_size,)
    for bad in (0, step // 2, step + 1, spec.max_size + step, -step, True, float(step), "256"):
        with pytest.raises(
            CourseError,
            match=rf"sizes for {lesson_id} must be multiples of {step} from {step} to {spec.max_size} \(got {re.escape(repr(bad))}\)",
        ):
            spec.validate_sizes(lesson_id, [step, bad])
    with pytest.raises(CourseError, match=f"at least one size is needed for {lesson_id}"):
        spec.validate_sizes(lesson_id, [])


# -- the peers, on the simulated GPU's cuBLAS and copy ----------------------------


def _fp16(rng, shape):
    return device(rng.standard_normal(shape).astype(np.float16))


@pytest.mark.parametrize("out", ["float32", "float16"])
def test_cublas_computes_a_times_b_for_b_stored_k_by_n(simulated_gpu, out):
    rng = np.random.default_rng(1)
    m, k, n = 48, 80, 32  # all different, so a swapped dimension or leading dimension shows
    a, b = _fp16(rng, (m, k)), _fp16(rng, (k, n))
    d = device(np.full((m, n), np.nan, dtype=out))
    gemm = Cublas(out=out, b_layout="kn")
    gemm(a, b, d)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(d, want, rtol=1e-2 if out == "float16" else 1e-5, atol=1e-2)
    assert gemm.name == ("cuBLAS gemmEx" if out == "float32" else "cuBLAS gemmEx (KN, float16 out)")


def test_cublas_computes_a_times_b_for_b_stored_n_by_k(simulated_gpu):
    # B stored N x K (K contiguous, the layout wgmma reads): cuBLAS's "TN" case.
    rng = np.random.default_rng(2)
    m, k, n = 48, 80, 32
    a, b_nk = _fp16(rng, (m, k)), _fp16(rng, (n, k))
    d = device(np.full((m, n), np.nan, dtype=np.float32))
    gemm = Cublas(out="float32", b_layout="nk")
    gemm(a, b_nk, d)
    np.testing.assert_allclose(d, a.astype(np.float64) @ b_nk.T.astype(np.float64), rtol=1e-5, atol=1e-3)
    assert gemm.name == "cuBLAS gemmEx (NK, float32 out)"


def test_device_copy_copies_the_sources_bytes(simulated_gpu):
    src = device(np.arange(12, dtype=np.float32).reshape(3, 4))
    dst = device(np.zeros((3, 4), dtype=np.float32))
    device_copy(dst, src)
    assert np.array_equal(dst, src)


def test_occupancy_is_queried_else_estimated_and_labelled(simulated_gpu):
    compiled = SimCompiled(Kernel(lambda *a: None, num_regs=90, shared_size_bytes=32768))
    assert occupancy(compiled, 256) == (2, "queried: cuOccupancyMaxActiveBlocksPerMultiprocessor", 90, 0)
    simulated_gpu.occupancy = None  # the driver's query fails: Hopper's per-SM limits
    # threads: 2048 // 256 = 8; registers: 65536 // (90 * 256) = 2; shared: 233472 // (32768 + 1024) = 6
    assert occupancy(compiled, 256)[:2] == (2, "estimate from threads, registers and shared memory")
    light = SimCompiled(Kernel(lambda *a: None, num_regs=32, shared_size_bytes=0))
    assert occupancy(light, 256)[0] == 8  # threads
    assert occupancy(light, 256, shared_mem=100_000)[0] == 2  # 233472 // (100000 + 1024)


def test_the_engines_checks_run_on_device_arrays(simulated_gpu):
    # The engine checks with the lesson's own check (course.kernel.host), on the arrays where they live:
    # the CuPy path of check_bits and check_relative (DeviceArray says it is CuPy's).
    want = device(np.arange(12, dtype=np.float32).reshape(3, 4))
    got = device(want.copy())
    assert check_bits(got, want).passed
    got[1, 2] = np.nan
    got[0, 0] = -0.0  # equal to 0.0 as a number, not as bits
    c = check_bits(got, want)
    assert (c.failures, c.mismatch.index, c.mismatch.row, c.mismatch.col) == (2, 0, 0, 0)
    ref = want.astype(np.float64)
    r = check_relative(got, ref, 1e-3)
    assert r.failures == 1 and (r.mismatch.row, r.mismatch.col) == (1, 2)  # NaN fails; -0.0 == 0.0 passes


# -- measuring, end to end on the simulated GPU ----------------------------------


def _rotation(lesson_id: str, n: int) -> tuple[int, int]:
    sets = rotation_buffers(spec_of(get_lesson(lesson_id)).set_bytes(n), L2_BYTES)
    return sets, min(sets, MAX_CALLS_PER_REPEAT)


def _kernel_outputs(sim, n: int) -> set[int]:
    return {ptr for what, size, ptr in sim.launches if what == "kernel" and size == n}


def test_day76_measures_end_to_end(simulated_gpu, tmp_path):
    sim, lines = simulated_gpu, []
    result = measure(get_lesson("day76"), [256, 64, 64], MIN_REPEATS, progress=lines.append)
    assert result.sizes == (64, 256) and result.unit == "GB/s" and result.lesson == "day76"
    assert (result.device, result.sm_count, result.l2_bytes) == (SIM_GPU.name, 132, L2_BYTES)
    assert result.command == "python -m course bench day76"
    assert result.peer_names == (day76_bench.PEER_ADD, day76_bench.PEER_COPY) == peer_names("day76")
    # No -D at the lesson's own size (256), so the page shares the lesson's compile cache.
    assert sim.compiles == [("day76", {"TMA_DIM": 64}, None), ("day76", None, None)]
    for row in result.rows:
        sets, inner = _rotation("day76", row.size)
        for m in (row.kernel, *row.peers):
            t = m.timing
            assert (t.buffers, t.calls_per_repeat, t.repeats, t.gap_repeats) == (sets, inner, MIN_REPEATS, 0)
        assert len(_kernel_outputs(sim, row.size)) == sets  # every buffer set was launched on
        assert row.work == copy_bytes(row.size)
        # Rates from the simulated clock: kernel 1000 GB/s, x + 1 at 500, the copy at 2000.
        assert row.kernel.rate == pytest.approx(KERNEL_RATE["day76"])
        assert row.peer(day76_bench.PEER_ADD).rate == pytest.approx(ADD_GB_S)
        assert row.peer(day76_bench.PEER_COPY).rate == pytest.approx(COPY_GB_S)
        assert row.peer(day76_bench.PEER_ADD).ratio == pytest.approx(2.0)
        assert row.peer(day76_bench.PEER_COPY).ratio == pytest.approx(0.5)
        assert row.check == (
            f"kernel bit-exact on all {row.size**2} elements; x + 1 (CuPy) bit-exact on all {row.size**2} "
            f"elements; D2D copy bit-exact on all {row.size**2} elements, output poisoned first"
        )
    assert (rotation_buffers(copy_bytes(64), L2_BYTES), rotation_buffers(copy_bytes(256), L2_BYTES)) == (
        32,
        2,
    )
    assert result.ceilings == {day76_bench.COPY_CEILING: pytest.approx(COPY_GB_S)}
    assert [r.kind for r in result.reasons] == ["measured", "measured"]
    small_us = copy_bytes(64) / (KERNEL_RATE["day76"] * 1e9) * 1e6
    assert result.reasons[0].value == pytest.approx(small_us)
    assert "1 CTAs on 132 SMs" in result.reasons[0].detail
    assert result.reasons[1].value == pytest.approx(0.5)
    assert any(f">= {ROTATION_FACTOR}x the 0 MiB L2" in note for note in result.notes)
    # Progress: the plan, then one line per size.
    assert len(lines) == 3 and lines[0].startswith("day76: timing on Simulated H200 at N = 64, 256")
    assert lines[1].startswith("day76 N=64: compile 0.01 s cached; checked; kernel ")
    assert "= 1,000 GB/s; x + 1 (CuPy) 500 GB/s (2.00x); D2D copy 2,000 GB/s (0.50x)" in lines[1]
    write(result, tmp_path)
    assert load("day76", tmp_path) == result


def test_day78_measures_end_to_end(simulated_gpu, tmp_path):
    sim, lines = simulated_gpu, []
    result = measure(get_lesson("day78"), [64, 128], MIN_REPEATS, progress=lines.append)
    assert result.sizes == (64, 128) and result.unit == "TFLOP/s"
    cublas = peer_names("day78")[0]
    assert result.peer_names == (cublas,) == ("cuBLAS gemmEx",)
    for row in result.rows:
        sets, inner = _rotation("day78", row.size)
        assert (row.kernel.timing.buffers, row.kernel.timing.calls_per_repeat) == (sets, inner)
        assert row.peers[0].timing.repeats == row.kernel.timing.repeats == MIN_REPEATS
        assert len(_kernel_outputs(sim, row.size)) == sets
        assert row.kernel.rate == pytest.approx(KERNEL_RATE["day78"])
        assert row.peers[0].rate == pytest.approx(CUBLAS_TFLOP_S)
        assert row.peers[0].ratio == pytest.approx(KERNEL_RATE["day78"] / CUBLAS_TFLOP_S)
        assert re.fullmatch(
            r"kernel max rel error \S+ \(tolerance 0\.001, max\(\|ref\|, {floor}\) floor\); cuBLAS gemmEx max rel "
            r"error \S+ \(tolerance 0\.001, max\(\|ref\|, {floor}\) floor\), output poisoned first".format(
                floor=re.escape(f"{row.size**0.5:g}")
            ),
            row.check,
        )
    # The sizes, then the variants (from the kernel's source, at the largest size), then the kernel
    # again for its occupancy.
    n = 128
    assert sim.compiles == [
        ("day78", {"GEMM_DIM": 64}, None),
        ("day78", {"GEMM_DIM": 128}, None),
        ("day78", {"GEMM_DIM": n}, "loads only"),
        ("day78", {"GEMM_DIM": n}, "wgmma only"),
        ("day78", {"GEMM_DIM": n}, "neither"),
        ("day78", {"GEMM_DIM": n}, None),
    ]
    assert {what for what, size, _ in sim.launches if size == n} == {"kernel", *VARIANT_SHARE}
    # cuBLAS's peak of the same run (PEAK_SIZE is 256 on the simulated GPU).
    assert result.ceilings == {day78_bench.CUBLAS_PEAK: pytest.approx(CUBLAS_TFLOP_S)}
    kernel_ms = gemm_flops(n) / (KERNEL_RATE["day78"] * 1e12) * 1e3
    reasons = {r.title: r for r in result.reasons}
    assert list(reasons) == [
        "Fraction of the measured cuBLAS peak",
        "The producer's global->shared copy alone",
        "wgmma alone (the producer's loads removed)",
        "Barriers, epilogue and launch (neither loads nor wgmma)",
        "How much the producer and the consumer overlap",
        "64x64 tiles: CTAs against SMs",
        "wait_group 0 every tile, against a deeper pipeline",
    ]
    assert reasons["Fraction of the measured cuBLAS peak"].value == pytest.approx(
        100 * KERNEL_RATE["day78"] / CUBLAS_TFLOP_S
    )
    assert reasons["The producer's global->shared copy alone"].value == pytest.approx(0.8 * kernel_ms)
    assert reasons["wgmma alone (the producer's loads removed)"].value == pytest.approx(
        KERNEL_RATE["day78"] / 0.3
    )
    assert reasons["Barriers, epilogue and launch (neither loads nor wgmma)"].value == pytest.approx(
        0.1 * kernel_ms
    )
    assert reasons["How much the producer and the consumer overlap"].value == pytest.approx(kernel_ms)
    ctas = reasons["64x64 tiles: CTAs against SMs"]
    assert ctas.value == 4 and "2 resident per SM (queried" in ctas.detail and "90 registers" in ctas.detail
    assert reasons["wait_group 0 every tile, against a deeper pipeline"].value is None
    assert {r.kind for r in result.reasons} == {"measured", "derived", "counted", "not measured"}
    assert any(note.startswith(f"variants compiled at N={n}") for note in result.notes)
    # The plan, two sizes, three variants, the peak.
    assert len(lines) == 7
    assert [line.split(":")[0] for line in lines[3:6]] == [
        f"day78 N={n} variant 'loads only'",
        f"day78 N={n} variant 'wgmma only'",
        f"day78 N={n} variant 'neither'",
    ]
    assert lines[6] == f"day78 cuBLAS peak at N=256: {CUBLAS_TFLOP_S:.0f} TFLOP/s"
    write(result, tmp_path)
    assert load("day78", tmp_path) == result


def test_a_wrong_kernel_is_caught_before_anything_is_timed(simulated_gpu):
    sim = simulated_gpu
    sim.corrupt = lambda out: out.__setitem__((1, 3), out[1, 3] + np.float32(1))  # one element off
    lines: list[str] = []
    with pytest.raises(
        CheckFailed,
        match=r"^day76 N=64, kernel: 1 of 4096 elements wrong \(bits check\); first at row 1, col 3: got \S+, want \S+$",
    ):
        measure(get_lesson("day76"), [64, 128], MIN_REPEATS, progress=lines.append)
    assert sim.events == 0 and len(sim.launches) == 1  # the one checking launch; nothing timed
    assert not any("N=" in line for line in lines)


def test_a_tile_the_kernel_never_writes_fails_the_check(simulated_gpu, monkeypatch):
    # One row of blocks short: the last row of tiles keeps the poison (NaN) the engine wrote first.
    sim = simulated_gpu

    def short_grid(lesson, defines=None, arch=None, source=None):
        return SimCompiled(
            Kernel(lambda grid, block, *args: sim.gemm_kernel((grid[0], grid[1] - 1), block, *args))
        )

    from course.kernel import compile as compile_module

    monkeypatch.setattr(compile_module, "compile_lesson", short_grid)
    with pytest.raises(
        CheckFailed,
        match=r"^day78 N=128, kernel: 8192 of 16384 elements wrong \(relative check\); first at row 64, col 0: got nan",
    ):
        measure(get_lesson("day78"), [128], MIN_REPEATS, progress=lambda line: None)
    assert sim.events == 0


def test_cublas_with_a_and_b_swapped_is_caught_by_the_check(simulated_gpu, monkeypatch):
    # A cuBLAS call with A and B swapped computes B A, not A B: the check must say so.
    right = Cublas.__call__
    monkeypatch.setattr(Cublas, "__call__", lambda self, a, b, d: right(self, b, a, d))
    with pytest.raises(
        CheckFailed,
        match=r"^day78 N=64, cuBLAS gemmEx: \d+ of 4096 elements wrong \(relative check\); first at row \d+, col \d+",
    ):
        measure(get_lesson("day78"), [64], MIN_REPEATS, progress=lambda line: None)
    assert simulated_gpu.events == 0


def test_a_machine_that_cannot_run_the_lesson_is_refused_before_anything(simulated_gpu, monkeypatch):
    ampere = dataclasses.replace(SIM_GPU, name="Simulated A100", cc=(8, 0))
    monkeypatch.setattr(gate, "probe", lambda: gate.Machine(ampere, None, None, {}))
    with pytest.raises(EnvironmentProblem, match="Simulated A100 is compute capability 8.0; Day 76 needs"):
        measure(get_lesson("day76"), [64], MIN_REPEATS, progress=lambda line: None)
    assert simulated_gpu.compiles == [] and simulated_gpu.events == 0


def test_arguments_are_refused_before_the_gpu(simulated_gpu):
    with pytest.raises(CourseError, match="multiples of 64"):
        measure(get_lesson("day76"), [100], MIN_REPEATS)
    with pytest.raises(CourseError, match=f"at least {MIN_REPEATS}"):
        measure(get_lesson("day76"), [64], MIN_REPEATS - 1)
    assert simulated_gpu.compiles == [] and simulated_gpu.holds == []


def test_too_little_free_memory_is_a_clear_refusal(simulated_gpu):
    simulated_gpu.free_bytes = 2**20
    with pytest.raises(
        CourseError,
        match=r"day76 at N=64 needs \d+\.\d GiB of GPU memory and 0\.0 GiB is free; choose smaller sizes \(--sizes\)",
    ):
        measure(get_lesson("day76"), [64], MIN_REPEATS, progress=lambda line: None)


def test_a_peer_that_cannot_run_here_is_reported_in_one_line_and_never_called(simulated_gpu, monkeypatch):
    # An optional library missing (nvmath-python for cuBLASLt): the run goes on with the other
    # peers, the peer is neither called nor timed, and the result's notes say why in one line.
    from course.bench import engine
    from course.bench.spec import Peer

    called: list[int] = []
    real = spec_of(get_lesson("day78"))

    def peers():
        absent = Peer(
            "cuBLASLt heuristic (nvmath-python)", lambda work, j: called.append(j), unavailable="why"
        )
        return (*real.peers(), absent)

    monkeypatch.setattr(engine, "spec_of", lambda lesson: dataclasses.replace(real, peers=peers))
    lines: list[str] = []
    result = measure(get_lesson("day78"), [64], MIN_REPEATS, progress=lines.append)
    assert result.peer_names == ("cuBLAS gemmEx",) and not called
    said = "cuBLASLt heuristic (nvmath-python): not measured on this machine: why"
    assert result.notes.count(said) == 1
    assert f"day78: {said}" in lines


def test_cublaslt_without_nvmath_is_an_environment_problem_and_says_how_to_install(monkeypatch):
    import sys

    from course.bench.peers import CublasLt, cublaslt_problem

    monkeypatch.setitem(sys.modules, "nvmath.linalg.advanced", None)  # import fails: not installed
    with pytest.raises(
        EnvironmentProblem, match=r"nvmath-python is not installed .*pip install nvmath-python"
    ):
        CublasLt()
    assert cublaslt_problem().startswith("nvmath-python is not installed")


def test_the_gemm_peers_are_gemmex_then_both_cublaslt_plans_each_with_why_it_cannot_run(
    simulated_gpu, monkeypatch
):
    from course.lessons import _ladder

    why = "nvmath-python is not installed (no module named 'nvmath'); pip install nvmath-python"
    monkeypatch.setattr(_ladder, "cublaslt_problem", lambda: why)
    peers = _ladder.cublas_and_lt_peers()
    assert [p.name for p in peers] == [
        "cuBLAS gemmEx (NK, float16 out)",
        "cuBLASLt heuristic (nvmath-python)",
        "cuBLASLt autotuned (nvmath-python)",
    ]
    assert [p.unavailable for p in peers] == ["", why, why]
    monkeypatch.setattr(_ladder, "cublaslt_problem", lambda: "")
    assert [p.unavailable for p in _ladder.cublas_and_lt_peers()] == ["", "", ""]


@pytest.mark.gpu
@pytest.mark.parametrize("autotune", [False, True])
def test_cublaslt_computes_a_times_b_transposed_in_place_on_each_buffer(autotune, gpu_for):
    gpu_for("day86")
    import cupy as cp

    from course.bench.peers import CublasLt, cublaslt_problem

    assert cublaslt_problem() == ""
    rng = np.random.default_rng(3)
    m, k, n = 200, 136, 72  # all different, so a swapped dimension or layout shows
    peer = CublasLt(autotune=autotune)
    for seed in range(2):  # the second call re-points the same plan at other buffers
        a = cp.asarray(rng.standard_normal((m, k)).astype(np.float16))
        b = cp.asarray(rng.standard_normal((n, k)).astype(np.float16))
        d = cp.full((m, n), np.nan, dtype=cp.float16)
        peer(a, b, d)
        want = a.get().astype(np.float64) @ b.get().T.astype(np.float64)
        np.testing.assert_allclose(
            d.get().astype(np.float64), want, rtol=2e-2, atol=2e-2, err_msg=f"call {seed}"
        )
    peer.release()


def test_kernel_is_the_name_of_the_kernels_measurement(simulated_gpu):
    result = measure(get_lesson("day76"), [64], MIN_REPEATS, progress=lambda line: None)
    assert result.rows[0].kernel.name == KERNEL and result.rows[0].kernel.ratio is None


# -- on the lesson's GPU: one small real run each (no timing assertions) --------------


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("lesson_id", BENCHED)
def test_measures_on_the_gpu(lesson_id, tmp_path, gpu_for):
    gpu_for(lesson_id)  # tests/conftest.py: skip with the gate's reason, or fail under COURSE_REQUIRE_GPU
    lesson = get_lesson(lesson_id)
    spec = spec_of(lesson)
    sizes = spec.page_sizes[:2]
    lines: list[str] = []
    result = measure(lesson, sizes, MIN_REPEATS, progress=lines.append)
    assert result.sizes == sizes and result.unit == spec.unit and result.lesson == lesson_id
    assert result.peer_names == peer_names(lesson_id)
    assert all(r.kernel.rate > 0 and r.kernel.timing.repeats == MIN_REPEATS for r in result.rows)
    assert all(p.rate > 0 and p.ratio and p.ratio > 0 for r in result.rows for p in r.peers)
    assert all(r.check.endswith("output poisoned first") for r in result.rows)
    assert sum(f"{lesson_id} N=" in line and "checked" in line for line in lines) == len(sizes)
    if spec.findings:
        assert all(isinstance(f, str) and f for f in spec.findings(result))
    write(result, tmp_path)
    assert load(lesson_id, tmp_path) == result
