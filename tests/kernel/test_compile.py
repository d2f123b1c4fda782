"""The GPU-less compile check (cuda-python's NVRTC) and compile errors."""

import pytest

from course.kernel.compile import CompileError, compile_offline, numbered_excerpt
from course.lessons import get_lesson


def test_tma_kernel_compiles_for_sm90_without_a_gpu():
    result = compile_offline(get_lesson("day76"))
    assert result.options.arch == "sm_90"
    assert result.cubin[:4] == b"\x7fELF"


def test_wgmma_kernel_compiles_for_sm90a_without_a_gpu():
    result = compile_offline(get_lesson("day78"))
    assert result.options.arch == "sm_90a"
    assert result.cubin[:4] == b"\x7fELF"


def test_wgmma_is_refused_on_plain_sm90():
    # Why the Day 78 gate exists: wgmma needs the architecture-specific target.
    with pytest.raises(CompileError) as info:
        compile_offline(get_lesson("day78"), arch="sm_90")
    assert "wgmma" in info.value.log and "not supported on .target 'sm_90'" in info.value.log
    assert "--gpu-architecture=sm_90" in info.value.options


def test_compile_sizes_are_compile_time_parameters():
    big = compile_offline(get_lesson("day76"), defines={"TMA_DIM": 4096})
    assert big.cubin[:4] == b"\x7fELF"
    with pytest.raises(CompileError, match="grid is sized to cover the matrix exactly"):
        compile_offline(get_lesson("day76"), defines={"TMA_DIM": 100})


def test_compile_error_keeps_log_options_and_numbered_source(tmp_path, monkeypatch):
    lesson = get_lesson("day76")
    broken = lesson.kernel_path.read_text().replace("bar.wait(cuda::std::move(token));", "bar.wait(oops);")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / lesson.kernel_file).write_text(broken)
    monkeypatch.setenv("COURSE_ROOT", str(tmp_path))
    with pytest.raises(CompileError) as info:
        compile_offline(lesson)
    err = info.value
    line = broken.splitlines().index("    bar.wait(oops);") + 1
    assert f"({line}): error" in err.log
    assert f"{line} |     bar.wait(oops);" in str(err)
    assert str(err).startswith(str(tmp_path / "kernels" / lesson.kernel_file))


def test_numbered_excerpt_shows_context_and_gaps():
    source = "\n".join(f"line {i}" for i in range(1, 21))
    out = numbered_excerpt(source, "k.cu(3): error: x\nk.cu(15): error: y\n", context=1)
    assert out.splitlines() == [
        " 2 | line 2",
        " 3 | line 3",
        " 4 | line 4",
        "   ...",
        "14 | line 14",
        "15 | line 15",
        "16 | line 16",
    ]
    assert numbered_excerpt(source, "ptxas error only") == ""


def test_missing_nvrtc_in_cupy_is_a_clear_message(monkeypatch):
    import cupy

    from course.errors import CourseError
    from course.kernel.compile import compile_lesson

    def no_nvrtc(*args, **kwargs):
        raise RuntimeError(
            "CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file"
        )

    monkeypatch.setattr(cupy, "RawModule", no_nvrtc)
    with pytest.raises(
        CourseError, match=r"NVRTC, the run-time compiler CuPy uses, cannot be loaded"
    ) as info:
        compile_lesson(get_lesson("day76"))
    assert "pip install nvidia-cuda-nvrtc-cu12" in str(info.value)


def test_missing_nvrtc_bindings_is_a_clear_message(monkeypatch):
    import sys

    import cuda.bindings

    from course.errors import CourseError

    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)  # the import fails ...
    monkeypatch.delattr(cuda.bindings, "nvrtc", raising=False)  # ... even after an earlier import
    with pytest.raises(CourseError, match="cuda-python's NVRTC bindings are needed"):
        compile_offline(get_lesson("day76"))


def test_cupy_build_for_another_arch_is_refused_before_compiling(monkeypatch):
    import cupy

    from course.errors import CourseError
    from course.kernel.compile import compile_lesson

    class H200:
        compute_capability = "90"

    monkeypatch.setattr(cupy.cuda, "Device", lambda *a: H200())
    monkeypatch.setattr(cupy, "RawModule", lambda **kw: pytest.fail("must not compile"))
    with pytest.raises(CourseError, match=r"CuPy compiles for the GPU in this machine \(sm_90\)"):
        compile_lesson(get_lesson("day76"), arch="sm_100a")


# ---------------------------------------------------------------------------
# The compile cache: the same text compiles once; anything that differs compiles again.
# A few-line kernel keeps these quick; the lesson kernels go through the same code.

TINY = 'extern "C" __global__ void tiny(float* x) { x[threadIdx.x] = TINY_VALUE; }\n'


class _CountingNvrtc:
    """cuda-python's NVRTC module, counting the compiles that really ran."""

    def __init__(self, real):
        self._real, self.compiles = real, 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def nvrtcCompileProgram(self, *args):
        self.compiles += 1
        return self._real.nvrtcCompileProgram(*args)


@pytest.fixture
def counting(monkeypatch, tmp_path):
    from course.kernel import _cuda, compile

    nv = _CountingNvrtc(_cuda.nvrtc())
    monkeypatch.setattr(compile, "nvrtc", lambda: nv)
    monkeypatch.setenv(compile.CACHE_ENV, str(tmp_path / "cache"))
    return nv


def _tiny(**kwargs):
    kwargs.setdefault("defines", {"TINY_VALUE": 1})
    return compile_offline(get_lesson("day78"), source=kwargs.pop("source", TINY), **kwargs)


def test_the_same_text_is_compiled_once_and_read_back_whole(counting, tmp_path):
    first = _tiny(ptxas_verbose=True)
    again = _tiny(ptxas_verbose=True)
    assert counting.compiles == 1 and not first.cached and again.cached
    assert first.cubin[:4] == b"\x7fELF" and "tiny" in first.ptx and first.log
    assert (again.cubin, again.log, again.ptx, again.nvrtc_version, again.seconds) == (
        first.cubin,
        first.log,
        first.ptx,
        first.nvrtc_version,
        first.seconds,
    )
    assert "kept from an earlier compile" in again.summary() and "kept" not in first.summary()
    # the first compile's time is not repeated as this one's (issue 38)
    took = f"in {first.seconds:.2f} s"
    assert (
        took in first.summary() and took not in again.summary() and "nothing compiled now" in again.summary()
    )
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1


def test_other_text_defines_or_flags_compile_again(counting):
    _tiny()
    _tiny(source=TINY + "// a comment is a change\n")
    _tiny(defines={"TINY_VALUE": 2})
    _tiny(ptxas_verbose=True)
    _tiny(arch="sm_90")
    assert counting.compiles == 5
    _tiny(defines={"TINY_VALUE": 2})
    assert counting.compiles == 5


def test_a_damaged_entry_is_compiled_again_and_replaced(counting, tmp_path):
    first = _tiny()
    (entry,) = (tmp_path / "cache").glob("*.json")
    entry.write_text('{"cubin": "not base64!"', encoding="utf-8")
    again = _tiny()
    assert counting.compiles == 2 and not again.cached and again.cubin == first.cubin
    assert _tiny().cached and counting.compiles == 2


def test_a_failed_compile_is_not_kept(counting, tmp_path):
    for _ in range(2):
        with pytest.raises(CompileError, match="TINY_VALUE"):
            _tiny(defines={})
    assert counting.compiles == 2 and not list((tmp_path / "cache").glob("*.json"))


def test_the_cache_can_be_turned_off_and_follows_xdg(counting, monkeypatch, tmp_path):
    from course.kernel import compile

    monkeypatch.setenv(compile.CACHE_ENV, "off")
    assert compile.compile_cache_dir() is None
    _tiny()
    _tiny()
    assert counting.compiles == 2 and not (tmp_path / "cache").exists()
    monkeypatch.delenv(compile.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile.compile_cache_dir() == tmp_path / "xdg" / "hopper-course" / "nvrtc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile.compile_cache_dir() == tmp_path / "home" / ".cache" / "hopper-course" / "nvrtc"


def test_the_compile_check_without_cupy_names_the_extra_to_install(monkeypatch):
    import sys

    from course.errors import EnvironmentProblem
    from course.kernel import gate

    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` fails as without the extra
    extra = gate.extra_for_driver(gate.probe().versions["driver (CUDA)"]) or "cuda12"
    with pytest.raises(EnvironmentProblem) as info:
        compile_offline(get_lesson("day78"))
    message = str(info.value)
    assert message.startswith("The compile check needs the libcu++ headers that come with CuPy")
    assert f"pip install -e '.[{extra}]'" in message and "CuPy is not installed" in message


class _BufferCheckingNvrtc(_CountingNvrtc):
    """cuda-python's NVRTC, refusing (before NVRTC writes) an output buffer Python holds read-only."""

    def __init__(self, real):
        super().__init__(real)
        self.sizes: dict[str, int] = {}

    def __getattr__(self, name):
        real = getattr(self._real, name)
        kind = name.removeprefix("nvrtcGet")
        if kind not in ("ProgramLog", "CUBIN", "PTX"):
            return real

        def into(prog, buf):
            assert not memoryview(buf).readonly, (
                f"{name} was handed an immutable {type(buf).__name__} to write into"
            )
            self.sizes[kind] = len(buf)
            return real(prog, buf)

        return into


def test_nvrtc_writes_into_buffers_of_its_own_and_leaves_shared_bytes_alone(monkeypatch, tmp_path):
    # Issue 35: an empty log is one byte (its NUL), and b" " * 1 is the interpreter's one shared
    # b" ": NVRTC wrote the NUL into it, after which " ".encode() gave b"\x00" in that process and,
    # on Python 3.12+, f-strings compiled later lost their lone spaces (f"{a} {b}" gave "ab"), so
    # tests that ran after a compile in the same xdist worker printed "day78core-offset".
    from course.kernel import _cuda
    from course.kernel import compile as kernel_compile

    nv = _BufferCheckingNvrtc(_cuda.nvrtc())
    monkeypatch.setattr(kernel_compile, "nvrtc", lambda: nv)
    monkeypatch.setenv(kernel_compile.CACHE_ENV, str(tmp_path / "cache"))
    result = _tiny()
    assert nv.compiles == 1 and nv.sizes["ProgramLog"] == 1 and result.log == ""  # the 1-byte case
    assert result.cubin[:4] == b"\x7fELF" and isinstance(result.cubin, bytes) and "tiny" in result.ptx
    assert chr(32).encode()[0] == 32  # reads the shared b" " itself
    assert eval(compile('f"{a} {b}"', "<issue 35>", "eval"), {"a": "a", "b": "b"}) == "a b"
