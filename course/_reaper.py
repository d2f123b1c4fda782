"""The caller as child subreaper: what escapes a child's keeper comes up to this process, and is killed.

    become_reaper()     # the grader, for its run (``quiz grade``); become_reaper(False) after it
    sweep_orphans()     # course._confine calls it after each child it ran is reaped

A child's keeper (``course._keeper``) is a subreaper for what the child
starts; a child that kills its keeper first (``kill(getppid(), SIGKILL)``
after a ``fork`` and ``setsid``) leaves a daemon that nothing below this
process reaps. Where this process is a subreaper too (Linux
``PR_SET_CHILD_SUBREAPER``), such an orphan is reparented here, and
``sweep_orphans`` kills and reaps every child of this process that none of
its runs started (``LIVE``: the keepers and bwraps running now) and that
is not in this process's own session (what it runs itself, such as
nvidia-smi, is). Inside bubblewrap the pid namespace does this already;
this is the backstop without one. No cgroup is made: the course does not
assume systemd or a delegated cgroup v2 tree.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading

__all__ = ["LIVE", "LIVE_LOCK", "become_reaper", "forget", "sweep_orphans"]

_PR_SET_CHILD_SUBREAPER = 36
_reaper = False
LIVE: set[int] = set()  # the children this process started (keepers, bwrap), while they run
LIVE_LOCK = threading.Lock()  # held while one starts, and while orphans are found and killed


def become_reaper(on: bool = True) -> bool:
    """Make this process a child subreaper (Linux): every orphan below it comes back to it, to be
    killed by ``sweep_orphans`` (``on=False``: sweep once more, and stop being one). True when it is one."""
    global _reaper
    if not on:
        sweep_orphans()
    with contextlib.suppress(OSError, AttributeError):
        done = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
        _reaper = on and done
    return _reaper


def _own_children() -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/self/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    return found


def sweep_orphans() -> int:
    """Kill and reap every process that came up to this subreaper from a child's run: a child of this
    process that it did not start (not a running keeper) and that is not in its session (what this
    process runs itself, such as nvidia-smi, is). Returns how many; 0 unless ``become_reaper``."""
    if not _reaper:
        return 0
    own = os.getsid(0)
    killed = 0
    with LIVE_LOCK:
        for _round in range(100):  # what a killed orphan leaves comes up in turn; bounded
            found = []
            for pid in _own_children():
                if pid in LIVE:
                    continue
                try:
                    if os.getsid(pid) == own:
                        continue
                except OSError:
                    pass  # gone already, or a zombie: reaped below
                found.append(pid)
            if not found:
                break
            for pid in found:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid in found:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)
            killed += len(found)
    return killed


def forget(pid: int) -> None:
    """The child ``pid`` has been reaped: no longer one of ours, and whatever it left is killed."""
    with LIVE_LOCK:
        LIVE.discard(pid)
    sweep_orphans()
