"""The process between the course and a child it runs (``course._confine``): limits, then cleanup.

    python -I -S course/_keeper.py --cpu 10 --as 536870912 --nproc 0 --fsize 1048576 -- PROGRAM ARG...

Run as a file, not as part of the package (``-I -S``: no site, no
environment, no course import), so it starts in milliseconds. It makes
itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``: every orphan
below it is reparented to it, even one that left the process group with
``setsid``), forks, sets the resource limits in the child and executes the
program there. So the program's parent is this process, not the course:
a program that signals its parent (``kill(getppid(), SIGKILL)`` or
``SIGSTOP``) stops this keeper, and the course, which holds the keeper's
process group and a deadline, kills the group and carries on. When the
program ends, or the course asks it to stop (``SIGTERM``, after a
``SIGCONT`` in case it was stopped), the keeper kills every process still
below it, waits for them, and ends the way the program ended (its exit
status, or its signal).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_LIMITS = {
    "--cpu": resource.RLIMIT_CPU,
    "--as": resource.RLIMIT_AS,
    "--nproc": getattr(resource, "RLIMIT_NPROC", None),
    "--fsize": resource.RLIMIT_FSIZE,
    "--nofile": resource.RLIMIT_NOFILE,
}


def _subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the course's process group kill is the backstop
        pass


def _children() -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            pass
    return found


def _reap_everything() -> None:
    """Kill every process below this one, and wait for each: orphans come back to a subreaper."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return  # nothing is left below us
        time.sleep(0.01)


def _limit(which: int, value: int) -> None:
    """Lower the limit to ``value`` (never above the hard limit already there)."""
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY and value > hard:
            value = hard
        resource.setrlimit(which, (value, value))
    except (OSError, ValueError):  # a limit this system does not take (macOS and RLIMIT_AS)
        pass


def main(argv: list[str]) -> None:
    if "--" not in argv:
        sys.stderr.write("usage: _keeper.py [--cpu S] [--as B] [--nproc N] [--fsize B] -- PROGRAM ...\n")
        os._exit(125)
    split = argv.index("--")
    options, program = argv[:split], argv[split + 1 :]
    limits = [(_LIMITS[options[i]], int(options[i + 1])) for i in range(0, len(options) - 1, 2)]
    _subreaper()
    pid = os.fork()
    if pid == 0:
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            for which, value in limits:
                if which is not None:
                    _limit(which, value)
            os.execvp(program[0], program)
        except OSError as e:
            sys.stderr.write(f"cannot start {program[0]}: {e.strerror}\n")
        os._exit(127)
    # Asked to stop (the course's deadline): end the program, then everything below it, as after its end.
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    _reap_everything()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: their action cannot be set, nor needs to be
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
