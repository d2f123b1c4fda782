"""The speed sections: arithmetic, results and their JSON, the plot, the Day 78
variants, the page's section without a GPU, the command line; and, on the
lesson's GPU, one small real measurement per lesson (no timing assertions).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from course import bench, day78, gate
from course.cli import main
from course.errors import CourseError, EnvironmentProblem
from course.lessons import get_lesson

# -- arithmetic ---------------------------------------------------------------


def test_bytes_and_flops_are_counted_from_the_shapes():
    assert bench.tma_bytes(256) == 256 * 256 * 4 * 2  # read once + written once
    assert bench.tma_bytes(16384) == 2 * 2**30
    assert bench.gemm_flops(256) == 2 * 256**3
    assert bench.gemm_flops(4096) == 137_438_953_472
    assert bench.gemm_bytes(1024) == 1024 * 1024 * (2 + 2 + 4)  # A, B fp16 read; D fp32 written
    with pytest.raises(CourseError, match="size must be a positive integer"):
        bench.tma_bytes(0)


def test_producer_bytes_count_the_64x64_tiles_re_reads():
    n = 4096
    assert bench.gemm_producer_bytes(n) == n**3 // 16
    # N/64 times the bytes of A and B themselves.
    assert bench.gemm_producer_bytes(n) == (n // 64) * (2 * n * n * 2)
    assert bench.ctas(256) == 16
    assert bench.ctas(4096) == 4096
    assert bench.waves(4096, 132, 2) == pytest.approx(4096 / 264)
    assert bench.tile_intensity(64, 64) == 32
    assert bench.tile_intensity(128, 256) == pytest.approx(85.33, abs=0.01)


def test_rates_use_decimal_units():
    assert bench.gb_per_s(1e9, 1.0) == pytest.approx(1000.0)  # 1 GB in 1 ms is 1 TB/s
    assert bench.gb_per_s(bench.tma_bytes(8192), 0.125) == pytest.approx(4294.967296)
    assert bench.tflop_per_s(1e12, 1000.0) == pytest.approx(1.0)
    assert bench.tflop_per_s(bench.gemm_flops(8192), 1.4) == pytest.approx(785.36, abs=0.01)
    assert bench.floor_ms(4.3e9, 4.3e12) == pytest.approx(1.0)
    with pytest.raises(CourseError, match="time must be positive"):
        bench.gb_per_s(1.0, 0.0)
    with pytest.raises(CourseError, match="ceiling rate must be positive"):
        bench.floor_ms(1.0, 0.0)


def test_ratio_and_median():
    assert bench.ratio(1.0, 4.0) == 0.25
    with pytest.raises(CourseError, match="must be positive"):
        bench.ratio(1.0, 0.0)
    assert bench.median([3.0, 1.0, 2.0]) == 2.0
    assert bench.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(CourseError, match="at least one value"):
        bench.median([])
    t = bench.Timing.from_samples([0.3, 0.1, 0.2, 0.5], calls_per_repeat=8, buffers=40, gaps=1)
    assert (t.median_ms, t.min_ms, t.max_ms, t.repeats) == (0.25, 0.1, 0.5, 4)


@pytest.mark.parametrize("n", [64, 256, 1024, 4096, 16384])
@pytest.mark.parametrize("l2", [40 * 2**20, 50 * 2**20, 60 * 2**20])
def test_rotation_covers_four_times_the_l2(n, l2):
    for set_bytes in (bench.tma_bytes(n), bench.gemm_bytes(n)):
        sets = bench.rotation_buffers(set_bytes, l2)
        assert sets >= 2
        assert sets * set_bytes >= 4 * l2
        if sets > 2:  # and no more sets than that takes
            assert (sets - 1) * set_bytes < 4 * l2


def test_rotation_count_for_the_h200():
    l2 = 50 * 2**20  # what an H100/H200 reports; the run reads the real value off the device
    assert bench.rotation_buffers(bench.tma_bytes(256), l2) == 400
    assert bench.rotation_buffers(bench.tma_bytes(16384), l2) == 2


def test_sizes_and_repeats_are_validated():
    assert bench.validate_sizes("day76", [512, 256, 512]) == (256, 512)
    for bad in (100, 0, 32, 65536, True):
        with pytest.raises(CourseError, match="multiples of 64"):
            bench.validate_sizes("day78", [bad])
    with pytest.raises(CourseError, match="no benchmark for lesson"):
        bench.validate_sizes("day99", [256])
    with pytest.raises(CourseError, match="at least one size"):
        bench.validate_sizes("day76", [])
    assert bench.validate_repeats(20) == 20
    with pytest.raises(CourseError, match="at least 20"):
        bench.validate_repeats(5)


def test_default_size_compiles_without_a_define():
    # The page then shares CuPy's cached compile with the lesson's own run.
    assert bench._defines(get_lesson("day76"), 256) is None
    assert bench._defines(get_lesson("day76"), 1024) == {"TMA_DIM": 1024}
    assert bench._defines(get_lesson("day78"), 4096) == {"GEMM_DIM": 4096}


def test_page_sizes_are_a_subset_of_the_full_run():
    for lesson_id, sizes in bench.PAGE_SIZES.items():
        assert max(sizes) <= (8192 if lesson_id == "day76" else 4096)
        assert bench.validate_sizes(lesson_id, sizes) == sizes


# -- checks (the same code runs on CuPy arrays on the GPU) --------------------


def test_bits_differ_counts_and_names_the_first():
    want = np.arange(12, dtype=np.float32).reshape(3, 4) + np.float32(1)
    got = want.copy()
    assert bench._bits_differ(got, want, np) == (0, None)
    got[1, 2] = np.nan
    got[2, 0] = -0.0 if want[2, 0] == 0 else want[2, 0] + 1
    assert bench._bits_differ(got, want, np) == (2, 6)


def test_rel_check_agrees_with_day78_check():
    a, b = day78.lcg_inputs(64)
    ref = day78.reference(a, b)
    got = ref.astype(np.float32)
    assert bench._rel_check(got, ref, 1e-3, np) == (0.0, 0, None)
    got[3, 5] += 0.5
    got[7, 1] = np.nan
    worst, failures, first = bench._rel_check(got, ref, 1e-3, np)
    expected = day78.check(got, ref, 1e-3)
    assert failures == expected.failures == 2
    assert first == expected.mismatch.index == 3 * 64 + 5
    assert worst == pytest.approx(expected.max_rel)


# -- results, JSON, table, plot -----------------------------------------------


def _timing(ms: float) -> bench.Timing:
    return bench.Timing(ms, ms * 0.95, ms * 1.1, 20, 4, 8, 0)


def synthetic(lesson: str = "day76", device: str = "NVIDIA H200") -> bench.BenchResult:
    rows = []
    for i, n in enumerate(bench.SIZES[lesson]):
        if lesson == "day76":
            work = float(bench.tma_bytes(n))
            k_ms, peers = work / 3.0e12 * 1e3 + 0.004, ((bench.PEER_ADD, 3.6e12), (bench.PEER_COPY, 4.1e12))
            rate = bench.gb_per_s
        else:
            work = float(bench.gemm_flops(n))
            k_ms, peers = work / 40e12 * 1e3 + 0.01, ((bench.PEER_CUBLAS, 600e12),)
            rate = bench.tflop_per_s
        k_rate = rate(work, k_ms)
        measured = []
        for name, per_s in peers:
            ms = work / per_s * 1e3 + 0.003
            measured.append(bench.Measurement(name, _timing(ms), rate(work, ms), k_rate / rate(work, ms)))
        rows.append(
            bench.SizeRow(
                n, work, 2.1 if i else 0.02, bool(i % 2), "bit-exact", bench.Measurement("kernel", _timing(k_ms), k_rate),
                tuple(measured),
            )
        )  # fmt: skip
    unit = "GB/s" if lesson == "day76" else "TFLOP/s"
    ceilings = (
        {bench.COPY_CEILING: max(r.peer(bench.PEER_COPY).rate for r in rows)}
        if lesson == "day76"
        else {bench.CUBLAS_CEILING: 700.0}
    )
    reasons = bench.tma_reasons(rows, 132) if lesson == "day76" else ()
    return bench.BenchResult(
        schema_version=bench.SCHEMA_VERSION,
        lesson=lesson,
        recorded_at="2026-11-30T10:00:00+00:00",
        command=f"python -m course bench {lesson}",
        device=device,
        compute_capability="9.0",
        sm_count=132,
        l2_bytes=50 * 2**20,
        driver="580.159.04",
        versions={"cupy": "14.2.0", "nvrtc": "13.0", "cuda-python": None},
        unit=unit,
        kernel_name="a kernel",
        rows=tuple(rows),
        reasons=reasons,
        ceilings=ceilings,
        notes=("a note",),
    )


@pytest.mark.parametrize("lesson", ["day76", "day78"])
def test_json_round_trip(tmp_path, lesson):
    result = synthetic(lesson)
    json_path, png_path = bench.write(result, tmp_path)
    assert json_path == tmp_path / f"{lesson}.json"
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert bench.load(lesson, tmp_path) == result
    data = json.loads(json_path.read_text())
    row = data["rows"][-1]
    assert set(row["kernel"]["timing"]) >= {"median_ms", "min_ms", "max_ms", "repeats"}
    assert {p["name"] for p in row["peers"]} == set(result.peer_names)
    assert all(p["ratio"] > 0 for p in row["peers"])
    assert data["device"] == "NVIDIA H200" and data["driver"] and data["recorded_at"]
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temp files


def test_load_says_what_is_wrong_and_where(tmp_path):
    assert bench.load("day76", tmp_path) is None
    path = tmp_path / "day76.json"
    data = json.loads(synthetic().to_json())
    del data["rows"][1]["kernel"]["timing"]["median_ms"]
    path.write_text(json.dumps(data))
    with pytest.raises(
        CourseError, match=r"rows\[1\] kernel 'kernel' timing: field 'median_ms' is missing"
    ) as e:
        bench.load("day76", tmp_path)
    assert str(e.value).startswith(str(path))
    data = json.loads(synthetic().to_json())
    data["sm_count"] = "132"
    path.write_text(json.dumps(data))
    with pytest.raises(CourseError, match="'sm_count' must be int"):
        bench.load("day76", tmp_path)
    data["sm_count"], data["schema_version"] = 132, 99
    path.write_text(json.dumps(data))
    with pytest.raises(CourseError, match="schema_version must be 1"):
        bench.load("day76", tmp_path)
    path.write_text('{\n  "schema_version": 1,\n  oops\n}')
    with pytest.raises(CourseError, match="not valid JSON") as e:
        bench.load("day76", tmp_path)
    assert e.value.line == 3
    (tmp_path / "day78.json").write_text(synthetic("day76").to_json())
    with pytest.raises(CourseError, match="for lesson 'day76', not 'day78'"):
        bench.load("day78", tmp_path)


def test_table_lists_every_size_and_peer():
    result = synthetic("day76")
    text = bench.table(result)
    for n in bench.SIZES["day76"]:
        assert re.search(rf"^\s*{n}\s", text, re.M)
    assert bench.PEER_ADD in text and bench.PEER_COPY in text and "x)" in text
    header, *body = bench.table_rows(result)
    assert len(body) == len(result.rows) and all(len(r) == len(header) for r in body)


def test_plot_has_log2_sizes_kernel_peers_and_the_copy_line():
    result = synthetic("day76")
    fig = bench.plot(result)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:3] == ["a kernel", bench.PEER_ADD, bench.PEER_COPY]
    best = result.ceilings[bench.COPY_CEILING]
    flat = [line for line in ax.get_lines() if len(set(line.get_ydata())) == 1]
    assert [line.get_ydata()[0] for line in flat] == [best]
    assert list(ax.get_lines()[0].get_xdata()) == list(bench.SIZES["day76"])
    assert bench.png_bytes(result)[:4] == b"\x89PNG"


def test_plot_for_day78_marks_the_cublas_peak():
    (ax,) = bench.plot(synthetic("day78")).axes
    labels = [line.get_label() for line in ax.get_lines()]
    assert bench.PEER_CUBLAS in labels and any(label.startswith("cuBLAS peak") for label in labels)


# -- Day 78 variants ------------------------------------------------------------


def _ptx_count(ptx: str, instruction: str) -> int:
    return len(re.findall(re.escape(instruction), ptx))


def test_variants_build_and_remove_what_they_say():
    lesson = get_lesson("day78")
    source = lesson.kernel_path.read_text()
    defines = {"GEMM_DIM": 1024}
    original = bench.compile_source_offline(lesson, source, defines).ptx
    builds = {}
    for name in bench.VARIANTS:
        text = bench.variant_source(source, name, lesson.kernel_path)
        assert text != source
        built = bench.compile_source_offline(lesson, text, defines)
        assert built.cubin[:4] == b"\x7fELF"
        builds[name] = built.ptx
    assert _ptx_count(original, "wgmma.mma_async") > 0
    # Loads only: no wgmma, and the producer's loads and shared stores all kept.
    assert _ptx_count(builds["loads only"], "wgmma.mma_async") == 0
    for op in ("ld.global", "st.shared"):
        assert _ptx_count(builds["loads only"], op) == _ptx_count(original, op)
    # wgmma only: the tensor-core issues kept; neither: none.
    assert _ptx_count(builds["wgmma only"], "wgmma.mma_async") > 0
    assert _ptx_count(builds["neither"], "wgmma.mma_async") == 0
    wgmma_only = bench.variant_source(source, "wgmma only")
    assert "loadStage(s ^ 1, kt + 1)" not in wgmma_only
    assert "loadStage(0, 0); loadStage(1, 0);" in wgmma_only


def test_a_substitution_must_match_exactly_once(tmp_path):
    lesson = get_lesson("day78")
    source = lesson.kernel_path.read_text()
    missing = source.replace("loadStage(s ^ 1, kt + 1);", "loadStage(s ^ 1, kt + 2);")
    with pytest.raises(CourseError, match=r"found 0\).*update VARIANTS") as e:
        bench.variant_source(missing, "wgmma only", lesson.kernel_path)
    assert str(e.value).startswith(str(lesson.kernel_path))
    twice = source + "\n// loadStage(0, 0);\n"
    with pytest.raises(CourseError, match=r"found 2"):
        bench.variant_source(twice, "wgmma only")
    # Whitespace may change (a reformatted kernel); the tokens may not.
    reflowed = source.replace("tileDesc(smA[s]) + off,\n", "tileDesc(smA[s]) + off,   ")
    assert "asm volatile" in bench.variant_source(reflowed, "loads only")
    with pytest.raises(CourseError, match="no variant named"):
        bench.variant_source(source, "nothing")


# -- reasons --------------------------------------------------------------------


def test_gemm_reasons_carry_numbers_and_their_source():
    b = bench.GemmBreakdown(
        size=4096, kernel_ms=4.0, loads_ms=3.8, wgmma_ms=0.9, neither_ms=0.2, cublas_ms=0.22,
        peak_tflops=700.0, peak_size=8192, sms=132, ctas_per_sm=2, ctas_per_sm_kind="queried", regs=90,
        local_bytes=0,
    )  # fmt: skip
    reasons = bench.gemm_reasons(b)
    kinds = {r.title: r.kind for r in reasons}
    assert kinds["Fraction of the measured cuBLAS peak"] == "measured"
    assert kinds["wait_group 0 every tile, against a deeper pipeline"] == "not measured"
    fraction = reasons[0].value
    assert fraction == pytest.approx(100 * bench.tflop_per_s(bench.gemm_flops(4096), 4.0) / 700.0)
    not_measured = [r for r in reasons if r.kind == "not measured"]
    assert all(r.value is None and r.value_text() == "n/a" for r in not_measured)
    ctas_reason = next(r for r in reasons if r.title.startswith("64x64"))
    assert (
        ctas_reason.value == 4096
        and "15.52 waves" in ctas_reason.detail
        and "90 registers" in ctas_reason.detail
    )
    assert "12% of the SMs" in ctas_reason.detail
    # Without a peak in the run, no fraction is claimed.
    from dataclasses import replace

    assert all("peak" not in r.title for r in bench.gemm_reasons(replace(b, peak_tflops=None)))
    with pytest.raises(CourseError, match="kind must be one of"):
        bench.Reason("x", 1.0, "ms", "guessed", "")


def test_tma_reasons_from_rows():
    reasons = bench.tma_reasons(synthetic("day76").rows, 132)
    assert [r.kind for r in reasons] == ["measured", "measured"]
    assert "16 CTAs on 132 SMs" in reasons[0].detail
    assert bench.tma_reasons((), 132) == ()


# -- the page's section without a GPU -------------------------------------------


@pytest.fixture
def no_gpu(monkeypatch):
    def verdict(lesson, machine=None):
        return gate.Verdict(
            lesson, "no-gpu", "There is no NVIDIA driver on this machine.", "Use a GPU machine."
        )

    monkeypatch.setattr(gate, "verdict", verdict)
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)


def test_speed_section_shows_the_recorded_figures(no_gpu, tmp_path):
    bench.write(synthetic("day76", device="<b>H200</b> & co"), tmp_path)
    section = bench.speed_section("day76", directory=tmp_path)
    assert not section.measured_here and section.result is not None
    assert "were recorded on <b>H200</b> & co" in section.message
    assert "2026-11-30" in section.message and "driver 580.159.04" in section.message
    page = section._repr_html_()
    assert "&lt;b&gt;H200&lt;/b&gt; &amp; co" in page and "<b>H200</b>" not in page
    assert "data:image/png;base64," in page and "<table>" in page
    assert "16384" in str(section)


def test_speed_section_redraws_a_missing_plot(no_gpu, tmp_path):
    json_path, png_path = bench.write(synthetic("day78"), tmp_path)
    png_path.unlink()
    section = bench.speed_section("day78", directory=tmp_path)
    assert section.png is not None and section.png[:4] == b"\x89PNG"


def test_speed_section_says_when_nothing_is_recorded(no_gpu, tmp_path):
    section = bench.speed_section("day78", directory=tmp_path)
    assert section.result is None and section.png is None
    assert "No recorded benchmark" in section.message and "python -m course bench day78" in section.message
    assert "No recorded benchmark" in section._repr_html_()


def test_speed_section_raises_when_a_gpu_is_required(no_gpu, tmp_path, monkeypatch):
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, "1")
    bench.write(synthetic("day76"), tmp_path)
    with pytest.raises(EnvironmentProblem, match="cannot time day76"):
        bench.speed_section("day76", directory=tmp_path)


# -- the command line -----------------------------------------------------------


def test_cli_exits_2_where_the_gpu_cannot_run_the_lesson(no_gpu, tmp_path, capsys):
    assert main(["bench", "day76", "--out", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "day76: not timed, nothing written. There is no NVIDIA driver" in out
    assert not list(tmp_path.iterdir())


def test_cli_refuses_bad_arguments_before_touching_the_gpu(no_gpu, capsys):
    assert main(["bench", "day78", "--sizes", "256", "100"]) == 2
    assert "multiples of 64" in capsys.readouterr().err
    assert main(["bench", "--repeats", "3"]) == 2
    assert "at least 20" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "day99"])


# -- on the lesson's GPU: one small real run each (no timing assertions) ---------


@pytest.mark.gpu
@pytest.mark.hopper
def test_day76_measures_on_the_gpu(day76_gpu, tmp_path):
    lines: list[str] = []
    result = bench.measure("day76", [256, 1024], 20, progress=lines.append)
    assert result.sizes == (256, 1024) and result.unit == "GB/s"
    assert [p.name for p in result.rows[0].peers] == [bench.PEER_ADD, bench.PEER_COPY]
    assert all(r.kernel.rate > 0 and r.kernel.timing.repeats == 20 for r in result.rows)
    assert "bit-exact" in result.rows[0].check
    assert sum("N=" in line for line in lines) == 2
    bench.write(result, tmp_path)
    assert bench.load("day76", tmp_path) == result


@pytest.mark.gpu
@pytest.mark.hopper
def test_day78_measures_on_the_gpu(day78_gpu, tmp_path):
    result = bench.measure("day78", [256, 512], 20, progress=lambda line: None, peak_size=1024)
    assert result.sizes == (256, 512) and result.unit == "TFLOP/s"
    assert result.rows[0].peers[0].name == bench.PEER_CUBLAS
    assert "max rel error" in result.rows[0].check
    assert bench.CUBLAS_CEILING in result.ceilings
    assert {r.kind for r in result.reasons} >= {"measured", "not measured"}
    bench.write(result, tmp_path)
    assert bench.load("day78", tmp_path) == result


# -- the measuring code end to end on a simulated GPU -----------------------------
#
# Not a GPU test: a stand-in for the few CuPy calls the measuring code makes,
# backed by NumPy, so that a typo or a wrong argument in those paths fails
# here rather than on the Hopper run. cuBLAS is modelled column-major, as it
# is, so the D^T = B^T A^T mapping is checked too.

_MEMORY: dict[int, np.ndarray] = {}


class _DeviceArray(np.ndarray):
    @property
    def data(self):  # CuPy: a MemoryPointer; here only .ptr is used
        _MEMORY[self.ctypes.data] = self
        return type("Pointer", (), {"ptr": self.ctypes.data})()


def _device(a):
    return np.asarray(a).view(_DeviceArray)


class _Event:
    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    done = False


def _gemm_ex(
    handle, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, compute, algo
):
    assert (ta, tb) == (0, 0) and compute == 68  # CUBLAS_OP_N, CUBLAS_COMPUTE_32F
    assert (a_type, b_type, c_type) == (2, 2, 0)  # CUDA_R_16F in, CUDA_R_32F out
    col = lambda ptr, rows, cols, ld: _MEMORY[ptr].reshape(-1)[: ld * cols].reshape(cols, ld)[:, :rows].T  # noqa: E731
    product = col(a, m, k, lda).astype(np.float32) @ col(b, k, n, ldb).astype(np.float32)
    _MEMORY[c].reshape(-1)[: ldc * n].reshape(n, ldc)[:, :m] = product.T


class _Kernel:
    num_regs, local_size_bytes, shared_size_bytes = 90, 0, 32768
    kernel = type("Function", (), {"ptr": 1})()

    def __init__(self, body):
        self.body = body

    def __call__(self, grid, block, args):
        self.body(*args)


class _Generator:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def random(self, shape, dtype):
        return _device(self.rng.random(shape, dtype=dtype))


def _fake_cupy():
    from types import SimpleNamespace

    stream = SimpleNamespace(ptr=0, synchronize=lambda: None)
    cuda = SimpleNamespace(
        get_current_stream=lambda: stream,
        Event=_Event,
        get_elapsed_time=lambda start, end: 0.05,
        Device=lambda: SimpleNamespace(attributes={"L2CacheSize": 256 * 1024}),
        runtime=SimpleNamespace(
            memGetInfo=lambda: (2**34, 2**35),
            memcpyDeviceToDevice=3,
            memcpyAsync=lambda dst, src, size, kind, s: np.copyto(_MEMORY[dst], _MEMORY[src]),
            CUDA_R_16F=2,
            CUDA_R_32F=0,
        ),
        device=SimpleNamespace(get_cublas_handle=lambda: 7),
        cublas=SimpleNamespace(
            gemmEx=_gemm_ex, CUBLAS_OP_N=0, CUBLAS_COMPUTE_32F=68, CUBLAS_GEMM_DEFAULT_TENSOR_OP=99
        ),
        driver=SimpleNamespace(occupancyMaxActiveBlocksPerMultiprocessor=lambda f, t, s: 2),
        compiler=SimpleNamespace(CompileException=RuntimeError),
    )
    gemm = _Kernel(lambda a, b, d: np.copyto(d, a.astype(np.float32) @ b.astype(np.float32)))
    module = SimpleNamespace(get_function=lambda name: gemm)

    class Cupy(SimpleNamespace):
        def __getattr__(self, name):
            return getattr(np, name)

    return Cupy(
        cuda=cuda,
        random=SimpleNamespace(default_rng=_Generator),
        RawKernel=lambda code, name: _Kernel(lambda ns: None),
        RawModule=lambda code, options: module,
        empty=lambda shape, dtype: _device(np.empty(shape, dtype)),
        get_default_memory_pool=lambda: SimpleNamespace(free_all_blocks=lambda: None),
    ), gemm  # fmt: skip


@pytest.fixture
def simulated_gpu(monkeypatch):
    from course import compile as compile_module
    from course import day76

    cp, gemm = _fake_cupy()
    monkeypatch.setattr(bench, "_cupy", lambda: cp)
    gpu = gate.Gpu(0, "Simulated H200", (9, 0), 132, 232448, 2**37)
    monkeypatch.setattr(
        gate, "probe", lambda: gate.Machine(gpu, None, None, {"cupy": "sim", "driver": "0.0"})
    )

    def encode(tile_map, address):
        return type("Map", (), {"address": address})()

    tma = _Kernel(lambda tensor_map, out: np.copyto(out, _MEMORY[tensor_map.address] + np.float32(1)))

    def compile_lesson(lesson, defines=None, arch=None, source=None):
        fn = tma if lesson.id == "day76" else gemm
        return type("Compiled", (), {"function": fn, "seconds": 0.01, "cache_hit": True})()

    monkeypatch.setattr(day76, "encode", encode)
    monkeypatch.setattr(compile_module, "compile_lesson", compile_lesson)
    _MEMORY.clear()
    yield
    _MEMORY.clear()


def test_day76_measuring_path_runs_on_a_simulated_gpu(simulated_gpu, tmp_path):
    lines: list[str] = []
    result = bench.measure("day76", [64, 128], 20, progress=lines.append)
    assert result.sizes == (64, 128) and result.device == "Simulated H200" and result.l2_bytes == 256 * 1024
    row = result.rows[0]
    assert row.kernel.timing.buffers == bench.rotation_buffers(bench.tma_bytes(64), 256 * 1024) == 32
    assert row.kernel.timing.calls_per_repeat == bench.MAX_CALLS_PER_REPEAT
    per_call_ms = 0.05 / bench.MAX_CALLS_PER_REPEAT  # each timed batch is 0.05 ms here
    assert row.kernel.rate == pytest.approx(bench.gb_per_s(bench.tma_bytes(64), per_call_ms))
    assert [p.ratio for p in row.peers] == [1.0, 1.0]
    assert bench.COPY_CEILING in result.ceilings and len(lines) == 3
    bench.write(result, tmp_path)
    assert bench.load("day76", tmp_path) == result


def test_day76_wrong_output_is_caught_before_timing(simulated_gpu, monkeypatch):
    from course import compile as compile_module
    from course.errors import CheckFailed

    wrong = _Kernel(lambda tensor_map, out: np.copyto(out, _MEMORY[tensor_map.address] + np.float32(2)))
    monkeypatch.setattr(
        compile_module,
        "compile_lesson",
        lambda lesson, defines=None, arch=None: type(
            "Compiled", (), {"function": wrong, "seconds": 0.0, "cache_hit": None}
        )(),
    )
    with pytest.raises(CheckFailed, match=r"day76 N=64, kernel: 4096 of 4096 elements differ.*row 0, col 0"):
        bench.measure("day76", [64], 20, progress=lambda line: None)


def test_day78_measuring_path_runs_on_a_simulated_gpu(simulated_gpu, tmp_path):
    lines: list[str] = []
    result = bench.measure("day78", [64, 128], 20, progress=lines.append, peak_size=256)
    assert result.sizes == (64, 128)
    assert (
        "kernel max rel error 0" in result.rows[0].check
        and "cuBLAS gemmEx max rel error 0" in result.rows[0].check
    )
    calls = min(bench.rotation_buffers(bench.gemm_bytes(256), 256 * 1024), bench.MAX_CALLS_PER_REPEAT)
    peak = bench.tflop_per_s(bench.gemm_flops(256), 0.05 / calls)
    assert result.ceilings[bench.CUBLAS_CEILING] == pytest.approx(peak)
    titles = [r.title for r in result.reasons]
    assert (
        "The producer's global->shared copy alone" in titles
        and "Fraction of the measured cuBLAS peak" in titles
    )
    assert any("variant 'loads only'" in line for line in lines)
    assert "2 resident per SM (queried" in next(
        r.detail for r in result.reasons if r.title.startswith("64x64")
    )
    bench.write(result, tmp_path)
    assert bench.load("day78", tmp_path) == result


def test_cublas_mapping_is_checked_against_the_reference(simulated_gpu, monkeypatch):
    from course.errors import CheckFailed

    # A cuBLAS call with A and B swapped computes B A, not A B: the check must say so.
    swapped = bench._Cublas.__call__

    def wrong(self, a, b, d):
        swapped(self, b, a, d)

    monkeypatch.setattr(bench._Cublas, "__call__", wrong)
    with pytest.raises(CheckFailed, match="day78 N=64, cuBLAS gemmEx: .* elements off"):
        bench.measure("day78", [64], 20, progress=lambda line: None, peak_size=None)
