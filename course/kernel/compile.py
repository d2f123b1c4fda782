"""Compiling the lesson kernels at run time.

Two paths, one set of options:

- ``compile_lesson``: CuPy's ``RawModule`` (NVRTC), loaded on the GPU,
  cached on disk by CuPy (the key hashes source, options, arch and the
  NVRTC version; see ``cupy/cuda/compiler.py``).
- ``compile_offline``: cuda-python's NVRTC bindings straight to a cubin,
  with no GPU and no driver. CI uses it to prove both kernels build for
  their Hopper targets on a machine that cannot run them, and the page
  uses it on a GPU that lacks the lesson's feature. Its results are kept
  on disk the way CuPy keeps its own (``compile_cache_dir``): the same
  source, options, headers and NVRTC give the same cubin, log and PTX, so
  running a page again does not compile an unchanged kernel again.

A failure raises ``CompileError``, which keeps the kernel path, the
options and the whole NVRTC log, and shows the source lines the log
points at, numbered as in the file.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._atomic import atomic_write_text
from .._data import read_text
from .._files import MAX_KERNEL_BYTES
from ..errors import CourseError
from . import gate
from ._cuda import checked, driver, nvrtc

if TYPE_CHECKING:
    from ..lesson import Lesson

STATIC_SMEM_LIMIT = 48 * 1024  # bytes a block gets without opting in (CUDA guide, compute capabilities)


class CompileError(CourseError):
    """NVRTC refused a kernel. Carries the source path, options and log."""

    def __init__(self, path: Path, options: tuple[str, ...], log: str, source: str):
        self.options = options
        self.log = log.strip()
        self.source = source
        excerpt = numbered_excerpt(source, log)
        message = f"NVRTC could not compile the kernel.\noptions: {' '.join(options)}\nlog:\n{self.log}"
        if excerpt:
            message += f"\nsource lines the log points at:\n{excerpt}"
        super().__init__(message, path=path)


_LOG_ERROR = re.compile(r"\((\d+)\): (?:error|catastrophic error)")


def numbered_excerpt(source: str, log: str, context: int = 2) -> str:
    """Source lines that an NVRTC log's errors name (``file(LINE): error``), numbered."""
    lines = source.splitlines()
    wanted: set[int] = set()
    # Front-end errors name a line; ptxas errors name PTX lines, not ours.
    for m in _LOG_ERROR.finditer(log):
        n = int(m.group(1))
        wanted.update(range(max(1, n - context), min(len(lines), n + context) + 1))
    if not wanted:
        return ""
    width = len(str(max(wanted)))
    out, previous = [], None
    for n in sorted(wanted):
        if previous is not None and n != previous + 1:
            out.append(" " * width + " ...")
        out.append(f"{n:>{width}} | {lines[n - 1]}")
        previous = n
    return "\n".join(out)


def cccl_include() -> Path:
    """libcu++ (<cuda/barrier>, <cuda/ptx>) as CuPy ships it, matched to CuPy.

    Without CuPy there are no such headers (the NVRTC wheel ships none; the
    course's CUDA extras bring both), so the compile check cannot run: an
    EnvironmentProblem says which extra to install.
    """
    try:
        # heavy: cupy, when a GPU path runs
        import cupy
    except ImportError as e:
        raise gate.missing(
            e, "The compile check needs the libcu++ headers that come with CuPy (the NVRTC wheel has none)"
        ) from None

    path = Path(cupy.__file__).parent / "_core" / "include" / "cupy" / "_cccl" / "libcudacxx"
    if not path.is_dir():
        raise CourseError(
            f"CuPy's libcu++ headers must be at {path} (CuPy 13.3 or newer ships them); "
            f"this CuPy is {cupy.__version__}: upgrade it"
        )
    return path


def cuda_include() -> Path:
    """The CUDA headers (cuda_fp16.h) for NVRTC, wherever this install has them."""
    try:
        # heavy: cuda-python, when a GPU path runs
        from cuda.pathfinder import find_nvidia_header_directory

        found = find_nvidia_header_directory("cudart")
        if found and (Path(found) / "cuda_fp16.h").is_file():
            return Path(found)
    except ImportError:
        pass
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            candidate = Path(os.environ[var]) / "include"
            if (candidate / "cuda_fp16.h").is_file():
                return candidate
    candidate = Path("/usr/local/cuda/include")
    if (candidate / "cuda_fp16.h").is_file():
        return candidate
    raise CourseError(
        "NVRTC needs the CUDA headers (cuda_fp16.h) and none were found: "
        "install them with `pip install nvidia-cuda-runtime-cu12` (the course's own install does), "
        "or set CUDA_PATH to a CUDA toolkit"
    )


@dataclass(frozen=True)
class CompileOptions:
    """What NVRTC is told, as typed fields rather than loose flag strings."""

    arch: str  # "sm_90" or "sm_90a"
    std: str = "c++17"
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not re.fullmatch(r"sm_\d+a?", self.arch):
            raise CourseError(f"arch must look like sm_90 or sm_90a (got {self.arch!r})")
        for key, _ in self.defines:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise CourseError(f"a define must be a C identifier (got {key!r})")

    def flags(self, arch_flag: str = "-arch") -> tuple[str, ...]:
        out = [f"-std={self.std}", f"{arch_flag}={self.arch}"]
        out += [f"-D{k}={v}" for k, v in self.defines]
        out += [f"-I{d}" for d in self.include_dirs]
        return tuple(out)


def options_for(
    lesson: Lesson, defines: Mapping[str, int | str] | None = None, arch: str | None = None
) -> CompileOptions:
    return CompileOptions(
        arch=arch or lesson.arch,
        defines=tuple((k, str(v)) for k, v in sorted((defines or {}).items())),
        include_dirs=(cccl_include(), cuda_include()),
    )


def _read_source(path: Path) -> str:
    """Through the one reader of named files: a FIFO, a device or a huge file is refused, never waited on."""

    return read_text(path, "the kernel source", limit=MAX_KERNEL_BYTES)


@dataclass
class Compiled:
    lesson: Lesson
    function: Any  # cupy.RawKernel
    module: Any  # cupy.RawModule
    seconds: float
    cache_hit: bool | None  # None when the cache cannot be inspected
    options: CompileOptions
    _allowed_shared: int = field(default=0, repr=False)

    def launch(
        self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0
    ) -> None:
        """Launch and synchronise; a failed launch becomes a LaunchError that says why.

        A configuration the card refuses (too many threads, more shared
        memory than a block may have) leaves the CUDA context usable, so the
        next launch works; a fault inside the kernel (an illegal address) is
        sticky and needs a kernel restart, and the message says so.
        """
        # heavy: cupy, when a GPU path runs
        import cupy

        try:
            self.allow_shared(shared_mem)
            self.function(grid, block, args, shared_mem=shared_mem)
            cupy.cuda.runtime.deviceSynchronize()
        except (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError) as e:
            raise LaunchError(self, grid, block, shared_mem, str(e)) from None

    def enqueue_dependent(
        self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0
    ) -> None:
        """Enqueue on CuPy's current stream with programmatic dependent launch (no synchronisation).

        cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the grid may
        start before the kernel ahead of it in the stream has finished, once that kernel's CTAs
        have all run ``griddepcontrol.launch_dependents`` (CUDA C++ Programming Guide, "Programmatic
        Dependent Launch and Synchronization"). Only for a kernel that runs ``griddepcontrol.wait``
        before it touches global memory (its ``kDependentLaunch``). CuPy's own launch takes no launch
        attributes, so this one marshals the arguments as CuPy does: an array by its device pointer,
        a NumPy scalar or a tensor map (``numpy.void``) by its bytes. Captured in a CUDA graph, the
        dependence becomes a programmatic edge."""
        # heavy: cupy, when a GPU path runs
        import cupy

        params = [_param_bytes(a, i, cupy) for i, a in enumerate(args)]
        pointers = (ctypes.c_void_p * max(len(params), 1))(*(ctypes.addressof(p) for p in params))
        d = driver()
        config = d.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = (*grid, 1, 1)[:3]
        config.blockDimX, config.blockDimY, config.blockDimZ = (*block, 1, 1)[:3]
        config.sharedMemBytes = shared_mem
        config.hStream = d.CUstream(cupy.cuda.get_current_stream().ptr)
        attribute = d.CUlaunchAttribute()
        attribute.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attribute.value.programmaticStreamSerializationAllowed = 1
        config.attrs = [attribute]
        config.numAttrs = 1
        self.allow_shared(shared_mem)
        checked(
            d.cuLaunchKernelEx(config, d.CUfunction(self.function.kernel.ptr), ctypes.addressof(pointers), 0),
            f"cuLaunchKernelEx of {self.lesson.kernel_file} (programmatic dependent launch, grid {grid}, "
            f"block {block}, {shared_mem} bytes of shared memory)",
        )

    def allow_shared(self, shared_mem: int) -> None:
        """Opt in to more than 48 KiB of dynamic shared memory, once per size (CUDA guide:
        cudaFuncAttributeMaxDynamicSharedMemorySize; CuPy's ``max_dynamic_shared_size_bytes``)."""
        if shared_mem > STATIC_SMEM_LIMIT and shared_mem > self._allowed_shared:
            self.function.max_dynamic_shared_size_bytes = shared_mem
            self._allowed_shared = shared_mem

    def summary(self) -> str:
        cache = {True: "served from CuPy's kernel cache", False: "compiled by NVRTC", None: "cache unknown"}[
            self.cache_hit
        ]
        return f"{self.lesson.kernel_file} for {self.options.arch}: {self.seconds:.2f} s, {cache}"


def _param_bytes(arg: Any, index: int, cupy: Any) -> Any:
    """One kernel argument as the bytes the launch copies (``Compiled.enqueue_dependent``)."""
    # heavy: numpy, only when a GPU path launches
    import numpy as np

    if isinstance(arg, cupy.ndarray):
        raw = int(arg.data.ptr).to_bytes(8, "little")
    elif isinstance(arg, np.generic):  # np.int32, np.uint64, a tensor map's np.void: its own bytes
        raw = arg.tobytes()
    else:
        raise CourseError(
            f"kernel argument {index} is a {type(arg).__name__}: a dependent launch takes CuPy arrays, "
            "NumPy scalars and tensor maps only (give an integer as np.int32(...), as for CuPy's launch)"
        )
    return ctypes.create_string_buffer(raw, len(raw))


# CUDA error names, driver (CUDA_ERROR_ILLEGAL_ADDRESS) and runtime
# (cudaErrorIllegalAddress) spellings alike, normalised to "illegaladdress".
# A fault inside a running kernel is sticky: the CUDA context of the process
# is unusable afterwards (CUDA C++ Programming Guide, "Error Checking": sticky
# errors); a launch refused before the kernel ran leaves it usable. The set is
# the errors whose entry in the CUDA Runtime and Driver API references
# (cudaError_t, CUresult) says "the process must be terminated and relaunched"
# or that the context "cannot be used anymore"; tests/tryout/test_sandbox.py checks
# it against those entries as cuda-python ships them.
STICKY_ERRORS = frozenset(
    {
        "illegaladdress",
        "misalignedaddress",
        "illegalinstruction",
        "invalidpc",
        "invalidaddressspace",
        "hardwarestackerror",
        "launchfailure",  # runtime spelling (cudaErrorLaunchFailure)
        "launchfailed",  # driver spelling (CUDA_ERROR_LAUNCH_FAILED)
        "assert",
        "launchtimeout",
        "tensormemoryleak",
        "contained",
        "externaldevice",
        "mpsclientterminated",
    }
)
_ERROR_NAME = re.compile(r"\b(?:CUDA_ERROR_([A-Z_]+)|cudaError([A-Za-z]+))\b")


def error_kind(text: str) -> str:
    """ "fault" for an error a running kernel raised (sticky), "refused" for any other launch error."""
    for m in _ERROR_NAME.finditer(text):
        name = (m.group(1) or m.group(2)).replace("_", "").lower()
        if name in STICKY_ERRORS:
            return "fault"
    return "refused"


class LaunchError(CourseError):
    """The driver refused a launch, or the kernel faulted while running."""

    def __init__(
        self, compiled: Compiled, grid: tuple[int, ...], block: tuple[int, ...], shared_mem: int, error: str
    ):
        self.error = error
        self.kind = error_kind(error)
        sticky = self.kind == "fault"
        advice = (
            "The kernel started and faulted while running. CUDA keeps that error for this process "
            "(a sticky error), so every later GPU call here fails too: restart the Jupyter kernel "
            "(or the command) before the next run."
            if sticky
            else "The launch was refused before the kernel ran; fix the configuration and run again: "
            "nothing else is affected."
        )
        limit = ""
        try:
            gpu = gate.probe().gpu
            if gpu is not None:
                limit = f" (this card allows {gpu.smem_per_block_optin} bytes of shared memory per block)"
        except CourseError:
            pass
        super().__init__(
            f"launching {compiled.lesson.kernel_name} with grid {grid}, block {block}, "
            f"{shared_mem} bytes of dynamic shared memory{limit} failed: {error}. {advice}",
            path=compiled.lesson.kernel_path,
        )
        self.sticky = sticky


_NVRTC_MISSING_WORDS = ("nvrtc", "NVRTC")


def _cache_dir() -> Path:
    return Path(os.environ.get("CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache")))


def _cache_entries() -> set[str] | None:
    d = _cache_dir()
    try:
        return {p.name for p in d.iterdir()} if d.is_dir() else set()
    except OSError:
        return None


def compile_lesson(
    lesson: Lesson,
    defines: Mapping[str, int | str] | None = None,
    arch: str | None = None,
    source: str | None = None,
) -> Compiled:
    """Compile and load the lesson's kernel through CuPy on the current GPU.

    ``source`` replaces the kernel file's text (a benchmark variant built
    from it); errors still name the lesson's kernel file.
    """
    # heavy: cupy, when a GPU path runs
    import cupy

    options = options_for(lesson, defines, arch)
    # CuPy appends its own -arch=sm_XY for the current device after our
    # options. NVRTC (seen with 12.9 and 13.0) then builds for the device's
    # number and keeps the "a" suffix from ours, which is how sm_90a reaches
    # wgmma through CuPy; but a request for another number (sm_100a on an
    # H200) would silently build for this device instead. Refuse it here;
    # compile_offline builds for any target without a GPU.
    device_cc = "".join(map(str, cupy.cuda.Device().compute_capability)) if arch else None
    if arch and device_cc and arch.removeprefix("sm_").rstrip("a") != device_cc:
        raise CourseError(
            f"CuPy compiles for the GPU in this machine (sm_{device_cc}), so a build for {arch} cannot be "
            f"loaded here; use course.kernel.compile.compile_offline(lesson, arch={arch!r}) to check that target "
            "without running it"
        )
    if source is None:
        source = _read_source(lesson.kernel_path)
    before = _cache_entries()
    start = time.perf_counter()
    try:
        module = cupy.RawModule(code=source, options=options.flags())
        function = module.get_function(lesson.kernel_name)
    except cupy.cuda.compiler.CompileException as e:
        raise CompileError(lesson.kernel_path, options.flags(), e.get_message(), source) from None
    except (RuntimeError, OSError, ImportError) as e:
        if not any(word in str(e) for word in _NVRTC_MISSING_WORDS):
            raise
        raise CourseError(
            f"NVRTC, the run-time compiler CuPy uses, cannot be loaded ({e}). Install it with "
            "`pip install nvidia-cuda-nvrtc-cu12` (the course's own install does), or for CUDA 13 "
            "`pip install nvidia-cuda-nvrtc`; `python -m course doctor` shows what CuPy finds."
        ) from None
    except (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError) as e:
        raise CourseError(
            f"the compiled {lesson.kernel_file} could not be loaded on this GPU ({e}); a cubin built for "
            f"{options.arch} runs only on the matching compute capability",
            path=lesson.kernel_path,
        ) from None
    seconds = time.perf_counter() - start
    after = _cache_entries()
    hit = None if before is None or after is None else not (after - before)
    return Compiled(lesson, function, module, seconds, hit, options)


@dataclass(frozen=True)
class OfflineCompile:
    lesson: Lesson
    options: CompileOptions
    cubin: bytes = field(repr=False)
    seconds: float  # how long NVRTC took, when it ran
    log: str
    nvrtc_version: str
    ptx: str = field(default="", repr=False)
    cached: bool = False  # read back from the compile cache: NVRTC did not run this time

    def summary(self) -> str:
        # A kept result's seconds are the first compile's: repeated under every later check, they read
        # as this check's time (issue 38), so a kept one says it compiled nothing now.
        how = (
            ", kept from an earlier compile of the same text (nothing compiled now)"
            if self.cached
            else f" in {self.seconds:.2f} s"
        )
        return (
            f"{self.lesson.kernel_file} compiled for {self.options.arch} without a GPU "
            f"(NVRTC {self.nvrtc_version}): {len(self.cubin)} bytes of cubin{how}"
        )


CACHE_ENV = "COURSE_CACHE_DIR"
_CACHE_FORMAT = "1"


def compile_cache_dir() -> Path | None:
    """Where ``compile_offline`` keeps its results; None when the cache is off.

    ``$COURSE_CACHE_DIR`` (``off`` turns the cache off), else
    ``$XDG_CACHE_HOME/hopper-course/nvrtc``, else ``~/.cache/hopper-course/nvrtc``
    (the XDG base directory convention; CuPy's own is ``~/.cupy/kernel_cache``).
    Deleting the folder is always safe.
    """
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hopper-course" / "nvrtc"


def _cache_key(
    name: str, source: str, flags: tuple[str, ...], version: str, include_dirs: tuple[Path, ...]
) -> str:
    """The source, its name, every flag, NVRTC's version and the headers' folders as installed.

    A folder's modification time changes when a package upgrade replaces its
    files, so new headers mean a new key (CuPy's key leaves headers out).
    """
    h = hashlib.sha256()
    stamps = []
    for folder in include_dirs:
        try:
            stamps.append(f"{folder}@{folder.stat().st_mtime_ns}")
        except OSError:
            stamps.append(f"{folder}@missing")
    for part in (_CACHE_FORMAT, version, name, *flags, *stamps, source):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _cache_read(path: Path, lesson: Lesson, options: CompileOptions) -> OfflineCompile | None:
    """A kept result, or None (absent, unreadable, or not one we wrote: then it is compiled again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return OfflineCompile(
            lesson,
            options,
            base64.b64decode(data["cubin"], validate=True),
            float(data["seconds"]),
            str(data["log"]),
            str(data["nvrtc_version"]),
            str(data["ptx"]),
            cached=True,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cache_write(path: Path, result: OfflineCompile) -> None:
    """Keep a result; a cache that cannot be written is no reason to fail a compile."""

    data = {
        "cubin": base64.b64encode(result.cubin).decode("ascii"),
        "seconds": result.seconds,
        "log": result.log,
        "nvrtc_version": result.nvrtc_version,
        "ptx": result.ptx,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data))
    except OSError:
        pass


def compile_offline(
    lesson: Lesson,
    arch: str | None = None,
    defines: Mapping[str, int | str] | None = None,
    source: str | None = None,
    ptxas_verbose: bool = False,
) -> OfflineCompile:
    """Compile to a cubin (and PTX) through cuda-python's NVRTC bindings: no GPU needed.

    ``source`` replaces the kernel file's text, as in ``compile_lesson``;
    ``ptxas_verbose`` puts ptxas's report (registers, spills, shared
    memory, warnings) in the log (``course.kernel.ptxas`` reads it).
    """
    options = options_for(lesson, defines, arch)
    flags = options.flags("--gpu-architecture") + (("--ptxas-options=-v",) if ptxas_verbose else ())
    if source is None:
        source = _read_source(lesson.kernel_path)
    nv = nvrtc()
    try:
        major, minor = checked(nv.nvrtcVersion(), "NVRTC version query")
    except RuntimeError as e:  # cuda-bindings raises this when libnvrtc is absent
        raise CourseError(
            f"NVRTC cannot be loaded ({e}); install it with `pip install nvidia-cuda-nvrtc-cu12`"
        ) from None
    folder = compile_cache_dir()
    kept = (
        folder
        / f"{_cache_key(lesson.kernel_file, source, flags, f'{major}.{minor}', options.include_dirs)}.json"
        if folder
        else None
    )
    if kept is not None:
        found = _cache_read(kept, lesson, options)
        if found is not None:
            return found
    prog = checked(
        nv.nvrtcCreateProgram(source.encode(), lesson.kernel_file.encode(), 0, [], []),
        "NVRTC program creation",
    )

    def read(kind: str) -> bytes:
        # nvrtcGet{Kind}Size then nvrtcGet{Kind}: one pattern for the log, the cubin and the PTX.
        # NVRTC writes into the buffer it is given, so it gets a mutable one of its own, never
        # bytes: b" " * 1 (an empty log is its NUL alone) is the interpreter's one shared b" ",
        # which NVRTC turned into b"\x00" for the whole process: " ".encode() gave b"\x00",
        # and on Python 3.12+ every f-string compiled afterwards lost its lone spaces
        # (f"{a} {b}" gave "ab"; issue 35; the same bug: NVIDIA-NeMo/Speech pull request 16234).
        size = checked(getattr(nv, f"nvrtcGet{kind}Size")(prog), f"nvrtcGet{kind}Size")
        buf = bytearray(size)
        checked(getattr(nv, f"nvrtcGet{kind}")(prog, buf), f"nvrtcGet{kind}")
        return bytes(buf)

    try:
        start = time.perf_counter()
        encoded = [f.encode() for f in flags]
        (result,) = nv.nvrtcCompileProgram(prog, len(encoded), encoded)
        seconds = time.perf_counter() - start
        log = read("ProgramLog").rstrip(b"\x00 ").decode(errors="replace")
        if result != nv.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(lesson.kernel_path, flags, log, source)
        cubin = read("CUBIN")
        ptx = read("PTX")
    finally:
        nv.nvrtcDestroyProgram(prog)
    result = OfflineCompile(
        lesson,
        options,
        cubin,
        seconds,
        log,
        f"{major}.{minor}",
        ptx.rstrip(b"\x00 ").decode(errors="replace"),
    )
    if kept is not None:
        _cache_write(kept, result)
    return result
