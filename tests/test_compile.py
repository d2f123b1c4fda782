"""The GPU-less compile check (cuda-python's NVRTC) and compile errors."""

import pytest

from course.compile import CompileError, compile_offline, numbered_excerpt
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

    from course.compile import compile_lesson
    from course.errors import CourseError

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

    from course.compile import compile_lesson
    from course.errors import CourseError

    class H200:
        compute_capability = "90"

    monkeypatch.setattr(cupy.cuda, "Device", lambda *a: H200())
    monkeypatch.setattr(cupy, "RawModule", lambda **kw: pytest.fail("must not compile"))
    with pytest.raises(CourseError, match=r"CuPy compiles for the GPU in this machine \(sm_90\)"):
        compile_lesson(get_lesson("day76"), arch="sm_100a")
