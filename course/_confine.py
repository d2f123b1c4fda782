"""Every child process that may hold a learner's code runs through here: confined, limited, bounded.

    with child_folder() as folder:
        done = run_child([...], folder=folder, timeout_s=10, limits=Limits(cpu_s=10, memory=512 << 20))
    done.returncode, done.stdout, done.timed_out, done.overflow

The g++ compile and the run of the CPU check, the NVRTC compile check
without a GPU, and the sandbox's GPU child all start here, and each gets:

- its own session and process group (``start_new_session``), killed as a
  group on a timeout, on too much output, and after it exits (so nothing
  it started outlives it);
- ``stdin`` from /dev/null, a scrubbed environment (what the compilers and
  CUDA need, no secrets of the caller's), a throwaway ``HOME``, ``TMPDIR``
  and working folder, removed afterwards;
- a keeper process between the course and the program (``course/_keeper.py``):
  it sets the resource limits (CPU time, address space where CUDA allows
  it, processes, file size, no core files) in the program alone, and as a
  child subreaper it kills whatever the program left behind, even a daemon
  that left the process group. A program that signals its parent
  (``kill(getppid(), SIGKILL)``, ``SIGSTOP``) reaches the keeper, never the
  course, which keeps its own deadline and kills the group;
- output read up to a bound: past it the child is killed and the caller
  told (``overflow``), never a whole flood in memory;
- where bubblewrap (``bwrap``, Debian's ``bubblewrap``; found on PATH or
  at ``COURSE_BWRAP``) works on this machine, the children run inside it:
  new user, pid, network, ipc and uts namespaces (a child cannot see or
  signal any process outside it, and everything in it dies with it), the
  system, the Python and the course's package read-only, a fresh ``/tmp``,
  and only the throwaway folder writable; nothing of the grader's files,
  the submissions or the checkout beyond that. The GPU child too, with each
  ``/dev/nvidia*`` node bound in (``binds="gpu"``); the driver's libraries
  are in the system folders, read-only. ``COURSE_SANDBOX=none`` turns it
  off, ``=bwrap`` makes its absence an error; ``python -m course doctor``
  says which is in use, and ``quiz grade`` runs no code answer without it
  (``require_sandbox``) unless the instructor says ``--unconfined``
  (finding, trying and the command line: ``course._bwrap``);
- where this process made itself a child subreaper (``become_reaper``: the
  grader does), whatever a child left behind that found its way up to this
  process (a daemon whose keeper was killed first) is killed after each
  child ends (``sweep_orphans``, ``course._reaper``), so nothing outlives
  its run even without a pid namespace.

A ``Session`` is such a child that stays: the grader's GPU worker, started
the same way (keeper, limits, group, environment), whose stdin carries the
grader's requests, one JSON line each; each request has its own time limit
and output bound, and past either the whole group is killed as above.

The GPU child gets no address-space limit: CUDA reserves tens of GiB of
virtual address space when it starts, so ``RLIMIT_AS`` would make it fail.
The learner's part of it is device code, which cannot make system calls;
its host side is the lesson's.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._bwrap import (
    BWRAP_ENV,
    GET_SANDBOX,
    KEEPER,
    SANDBOX_ENV,
    NoSandbox,
    Sandbox,
    bwrap_path,
    bwrap_prefix,
    require_sandbox,
    sandbox_status,
)
from ._reaper import LIVE, LIVE_LOCK, become_reaper, forget, sweep_orphans
from .errors import CourseError

__all__ = [
    "BWRAP_ENV",
    "GET_SANDBOX",
    "SANDBOX_ENV",
    "Answer",
    "Finished",
    "Limits",
    "NoSandbox",
    "Sandbox",
    "Session",
    "become_reaper",
    "bwrap_path",
    "child_folder",
    "require_sandbox",
    "run_child",
    "sandbox_status",
    "sweep_orphans",
]

# What any child may see of the caller's environment; everything else is dropped.
_PASS = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "CUDA_PATH",
    "CUDA_HOME",
    "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "COURSE_ROOT",
    "COURSE_REQUIRE_GPU",
)
_PASS_PREFIX = ("CUPY_",)


@dataclass(frozen=True)
class Limits:
    """Resource limits for the program a child runs (set by the keeper in the program alone)."""

    cpu_s: float  # RLIMIT_CPU: seconds of CPU time
    memory: int | None = None  # RLIMIT_AS, bytes; None where CUDA runs (it reserves huge address space)
    processes: int | None = None  # RLIMIT_NPROC (per user, so 0 means "no fork"; root is exempt)
    file_size: int = 64 << 20  # RLIMIT_FSIZE, bytes of any one file it writes
    open_files: int | None = None  # RLIMIT_NOFILE

    def keeper_args(self) -> list[str]:
        args = ["--cpu", str(max(1, int(self.cpu_s + 0.999))), "--fsize", str(self.file_size)]
        for flag, value in (
            ("--as", self.memory),
            ("--nproc", self.processes),
            ("--nofile", self.open_files),
        ):
            if value is not None:
                args += [flag, str(value)]
        return args


@dataclass(frozen=True)
class Finished:
    """How a child ended, and what it printed (up to the bound)."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    overflow: str | None  # "stdout" or "stderr" when it printed past the bound and was killed
    seconds: float
    sandbox: str  # "bubblewrap" or "keeper"

    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def how_it_ended(self) -> str:
        return how_it_ended(self.returncode)


def how_it_ended(returncode: int | None) -> str:
    """A child's end in words: its exit status, or the signal that killed it (directly or via a shell)."""
    if returncode is None:
        return "it did not end"
    if returncode < 0 or returncode > 128:
        number = -returncode if returncode < 0 else returncode - 128
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exit status {returncode}"


# ---------------------------------------------------------------------------
# The child.
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def child_folder(prefix: str = "course-child-") -> Iterator[Path]:
    """A throwaway working folder (with ``home/`` and ``tmp/``), removed afterwards whatever is in it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        (folder / "home").mkdir()
        (folder / "tmp").mkdir()
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def child_env(folder: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _PASS or k.startswith(_PASS_PREFIX)}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update({"HOME": str(folder / "home"), "TMPDIR": str(folder / "tmp"), "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra or {})
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 3.0) -> None:
    """Ask the keeper to end the program and everything below it (even what left the group), then
    kill the group whatever it did: SIGCONT first, in case the program stopped it."""
    for send in (lambda: os.killpg(proc.pid, signal.SIGCONT), lambda: proc.send_signal(signal.SIGTERM)):
        with contextlib.suppress(OSError):
            send()
    end = time.monotonic() + grace_s
    while time.monotonic() < end and not _exited(proc):
        time.sleep(0.02)
    _kill_group(proc.pid)


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Has it exited? Without reaping it, so its process group id stays its own until we kill the group."""
    if proc.returncode is not None:
        return True
    if hasattr(os, "waitid"):
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


OnLine = Callable[[str], "float | None"]


def _start(
    command: Sequence[str],
    folder: Path,
    limits: Limits,
    confine: bool,
    binds: str,
    readable: Sequence[Path],
    writable: Sequence[Path],
    env: Mapping[str, str] | None,
    stdin: int | None,
) -> tuple[subprocess.Popen[bytes], bool]:
    """The keeper (and bubblewrap where asked and working) around ``command``, started in its own session."""
    use_bwrap = confine and sandbox_status().works
    keeper = [os.path.realpath(sys.executable), "-I", "-S", str(KEEPER), *limits.keeper_args(), "--"]
    full = [*(bwrap_prefix(binds, folder, readable, writable) if use_bwrap else []), *keeper, *command]
    try:
        with LIVE_LOCK:  # a sweep never sees it started and not yet known as ours
            proc = subprocess.Popen(
                full,
                stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=folder,
                env=dict(env) if env is not None else child_env(folder),
                start_new_session=True,
            )
            LIVE.add(proc.pid)
    except OSError as e:
        raise CourseError(f"cannot start a child process ({e.strerror}): {command[0]}") from None
    return proc, use_bwrap


def run_child(
    command: Sequence[str],
    *,
    folder: Path,
    timeout_s: float,
    limits: Limits,
    confine: bool = True,
    binds: str = "system",
    readable: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    stdout_limit: int = 1 << 20,
    stderr_limit: int = 256 << 10,
    on_line: OnLine | None = None,
) -> Finished:
    """Run ``command`` in ``folder`` (from ``child_folder``) under ``limits``; see the module's docstring.

    ``confine`` puts it in bubblewrap where that works (``binds``: "system",
    the system folders and ``readable``, or "all", the whole machine,
    read-only); ``writable`` are folders besides ``folder`` it may write.
    ``on_line`` gets each line of stdout as it comes (then ``stdout`` stays
    empty) and may return a new time limit, in seconds from now.
    """
    start = time.monotonic()
    proc, use_bwrap = _start(command, folder, limits, confine, binds, readable, writable, env, stdin=None)
    out, err, partial = bytearray(), bytearray(), bytearray()
    total = 0
    timed_out, overflow = False, None
    deadline = start + timeout_s
    sel = selectors.DefaultSelector()

    def take(stream: object, chunk: bytes) -> str | None:
        """Keep ``chunk`` of ``stream``; "stdout" or "stderr" once that stream is past its bound."""
        nonlocal total, partial, deadline
        if stream is proc.stderr:
            err.extend(chunk[: max(0, stderr_limit - len(err))])
            return "stderr" if len(err) >= stderr_limit else None
        total += len(chunk)
        if total > stdout_limit:
            return "stdout"
        if on_line is None:
            out.extend(chunk)
            return None
        partial += chunk
        *lines, rest = partial.split(b"\n")
        partial = bytearray(rest)
        for line in lines:
            new = on_line(line.decode("utf-8", "replace"))
            if new is not None:
                deadline = time.monotonic() + new
        return None

    try:
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map() and overflow is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready = sel.select(min(remaining, 0.1))
            for key, _ in ready:
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                overflow = take(key.fileobj, chunk) or overflow
                if overflow:
                    break
            if not ready and _exited(proc):
                # The keeper has ended; what still holds its pipes is left over: keep what is
                # buffered and stop reading (the group is killed below).
                for key in list(sel.get_map().values()):
                    with contextlib.suppress(BlockingIOError):
                        while overflow is None and (chunk := os.read(key.fd, 1 << 16)):
                            overflow = take(key.fileobj, chunk)
                break
        # Its output is closed (or it is being stopped): it has until the deadline to exit.
        while not (timed_out or overflow) and not _exited(proc):
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(0.02)
        if timed_out or overflow:
            _stop(proc)
    except BaseException:
        _kill_group(proc.pid)  # interrupted (a learner stopped the cell): leave nothing running
        raise
    finally:
        sel.close()
        _kill_group(proc.pid)  # whatever it left in its group, before its id can be reused
        proc.wait()
        forget(proc.pid)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if on_line is not None and partial and overflow is None:
        on_line(partial.decode("utf-8", "replace"))
    return Finished(
        proc.returncode,
        bytes(out),
        bytes(err),
        timed_out,
        overflow,
        time.monotonic() - start,
        "bubblewrap" if use_bwrap else "keeper",
    )


# ---------------------------------------------------------------------------
# A child that answers one request after another (the grader's GPU worker).
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """How one request to a ``Session`` ended: answered, or the child stopped (and why)."""

    answered: bool
    timed_out: bool
    overflow: str | None
    returncode: int | None  # set once the child has ended
    stderr: bytes  # what it printed on stderr during this request (up to the bound)
    seconds: float


class Session:
    """A confined child started as ``run_child`` starts one, that reads requests on its stdin.

    ``ask(request, timeout_s, on_line, until)`` writes one line to the child and
    hands ``on_line`` each line it prints (``on_line`` may return a new time
    limit, in seconds from now, as for ``run_child``) until ``until()`` is true:
    the request is answered, and the child stays, waiting for the next one. If
    the limit passes first, or it prints more than ``stdout_limit`` (or
    ``stderr_limit``) bytes for one request, it is stopped with its whole
    group; if it ends, it is reaped. Either way the session is then over
    (``alive`` False) and a new one must be started. ``close()`` ends it:
    its stdin closed, then its group killed whatever it does.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        folder: Path,
        limits: Limits,
        writable: Sequence[Path] = (),
        readable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        stdout_limit: int = 1 << 20,
        stderr_limit: int = 256 << 10,
        binds: str = "gpu",
    ) -> None:
        # Bubblewrap where it works: the GPU worker, with the NVIDIA device files (``binds="gpu"``).
        self.proc, self.confined = _start(
            command, folder, limits, True, binds, readable, writable, env, stdin=subprocess.PIPE
        )
        self.stdout_limit, self.stderr_limit = stdout_limit, stderr_limit
        self._partial = bytearray()
        self._sel = selectors.DefaultSelector()
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self._sel.register(stream, selectors.EVENT_READ)
        self.alive = True

    def ask(self, request: str, timeout_s: float, on_line: OnLine, until: Callable[[], bool]) -> Answer:
        if not self.alive:
            raise CourseError("this child has ended; start a new one")
        start = time.monotonic()
        deadline = start + timeout_s
        err = bytearray()
        total = 0
        timed_out, overflow = False, None
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(request.rstrip("\n").encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:  # it has ended (a broken pipe): what it printed is read below
            pass

        def handle_lines() -> bool:
            """Hand on the complete lines read so far; True once the request is answered."""
            nonlocal deadline
            *lines, rest = self._partial.split(b"\n")
            self._partial = bytearray(rest)
            for n, line in enumerate(lines):
                new = on_line(line.decode("utf-8", "replace"))
                if new is not None:
                    deadline = time.monotonic() + new
                if until():
                    self._partial = bytearray(b"\n".join([*lines[n + 1 :], bytes(self._partial)]))
                    return True
            return False

        try:
            while self._sel.get_map():
                if handle_lines():
                    return Answer(True, False, None, None, bytes(err), time.monotonic() - start)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                ready = self._sel.select(min(remaining, 0.1))
                for key, _ in ready:
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        self._sel.unregister(key.fileobj)
                    elif key.fileobj is self.proc.stderr:
                        err.extend(chunk[: max(0, self.stderr_limit - len(err))])
                        overflow = "stderr" if len(err) >= self.stderr_limit else overflow
                    else:
                        total += len(chunk)
                        overflow = "stdout" if total > self.stdout_limit else overflow
                        self._partial += chunk
                if overflow:
                    break
                if not ready and _exited(self.proc):
                    break  # it has ended: what it printed is handled below
            if not (timed_out or overflow):
                if self._partial and not self._partial.endswith(b"\n"):
                    self._partial += b"\n"  # a last line without its newline
                answered = handle_lines()
                self.close(kill=not answered)
                if answered:  # as it ended: a new child serves the next request
                    return Answer(
                        True, False, None, self.proc.returncode, bytes(err), time.monotonic() - start
                    )
            else:
                self.close(kill=True)
        except BaseException:
            self.close(kill=True)  # interrupted: leave nothing running
            raise
        return Answer(False, timed_out, overflow, self.proc.returncode, bytes(err), time.monotonic() - start)

    def close(self, grace_s: float = 3.0, kill: bool = False) -> None:
        """End it: stdin closed (a worker leaves at end of input) and ``grace_s`` to leave, or at once
        with ``kill``; then its group killed whatever it does."""
        if self.proc.returncode is not None:
            return
        self.alive = False
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        end = time.monotonic() + (0.0 if kill else grace_s)
        while time.monotonic() < end and not _exited(self.proc):
            time.sleep(0.02)
        if not _exited(self.proc):
            _stop(self.proc)
        self._sel.close()
        _kill_group(self.proc.pid)
        self.proc.wait()
        forget(self.proc.pid)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
