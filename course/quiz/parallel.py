"""Run a grading run's code answers side by side, each child on one GPU: the scheduler and the GPU list.

``run_parallel`` runs each distinct piece once, at most ``jobs`` at a time,
and hands each run the ``CUDA_VISIBLE_DEVICES`` value of the slot it took:
slot ``i`` shows its child the GPU ``devices[i % len(devices)]`` and nothing
else, so the children are spread evenly over every visible GPU (or MIG slice)
and never share one beyond ``ceil(jobs / GPUs)``. A job does no work itself:
it waits on the child processes the runner starts (``course._confine``:
each confined and time-limited as in a serial run), so threads
(``concurrent.futures.ThreadPoolExecutor``) are enough, and one child that
hangs holds one slot until its own limit ends it while the others go on.

The run's time budget is a deadline on the injected clock: a piece whose
turn comes after it is not run (``None``). The callback ``done`` is called
in the caller's thread, in the order the pieces finish; an error a runner
raises (or an interrupt) stops the run at once: the pieces not started are
cancelled, those running end within their own limits, and it is raised here.

Which GPUs (``find_gpus``): the ``CUDA_VISIBLE_DEVICES`` of this process,
read as CUDA reads it, when it is set; otherwise ``nvidia-smi -L``, whose
UUIDs name each GPU (or each MIG slice of a GPU in MIG mode) whatever
``CUDA_DEVICE_ORDER`` says, so nothing needs CUDA in this process. No GPU
found: every child sees what this process sees (the CPU path).
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TypeVar

from ..errors import CourseError

__all__ = [
    "VISIBLE_ENV",
    "Gpus",
    "assign",
    "default_jobs",
    "find_gpus",
    "parse_smi_list",
    "parse_visible",
    "run_parallel",
]

VISIBLE_ENV = "CUDA_VISIBLE_DEVICES"
_SMI_TIMEOUT_S = 30.0  # nvidia-smi -L answers in well under a second; a wedged driver must not stop grading

Item = TypeVar("Item", bound=Hashable)
Result = TypeVar("Result")


def default_jobs() -> int:
    """How many children at a time by default: the cores this process may use (its affinity, where known)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Gpus:
    """The GPUs the children are spread over, each as the ``CUDA_VISIBLE_DEVICES`` value that shows a child that one."""

    devices: tuple[str, ...]
    source: str  # where they were found, in words
    ignored: str = ""  # the part of CUDA_VISIBLE_DEVICES that CUDA ignores too (after an invalid entry)

    def first(self, count: int) -> Gpus:
        """The first ``count`` of them (a run on fewer GPUs than are visible)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise CourseError(f"the number of GPUs must be a whole number of at least 1 (got {count!r})")
        if count > len(self.devices):
            raise CourseError(
                f"{count} GPUs asked for, but {len(self.devices)} are visible ({self.describe()})"
            )
        return Gpus(self.devices[:count], f"the first {count} of {self.source}")

    def describe(self) -> str:
        if not self.devices:
            return f"no GPU to spread over ({self.source}): every child sees what this process sees"
        names = ", ".join(self.devices)
        tail = f"; CUDA ignores the rest, {self.ignored!r}" if self.ignored else ""
        return f"{len(self.devices)} GPU{'s' if len(self.devices) != 1 else ''} ({names}) from {self.source}{tail}"


_INDEX = re.compile(r"\d+")
_UUID = re.compile(r"(?:GPU|MIG)-[0-9A-Za-z][0-9A-Za-z/-]*")


def parse_visible(value: str) -> Gpus:
    """``CUDA_VISIBLE_DEVICES`` as CUDA reads it: indices, ``GPU-`` and ``MIG-`` UUIDs, up to the first invalid entry.

    CUDA (programming guide, "CUDA Environment Variables") shows only the
    devices before an invalid entry: ``0,2,-1,1`` shows 0 and 2. An empty
    value shows none. A device named twice is used once. Each entry is passed
    to one child as it stands, so an index keeps meaning what it means here.
    """
    devices: list[str] = []
    entries = [e.strip() for e in value.split(",")]
    for n, entry in enumerate(entries):
        if not (_INDEX.fullmatch(entry) or _UUID.fullmatch(entry)):
            ignored = ",".join(entries[n:]) if value.strip() else ""
            return Gpus(tuple(devices), f"{VISIBLE_ENV}={value!r}", ignored)
        if entry not in devices:
            devices.append(entry)
    return Gpus(tuple(devices), f"{VISIBLE_ENV}={value!r}")


_SMI_GPU = re.compile(r"^GPU \d+: .*\(UUID: (GPU-[^)\s]+)\)\s*$")
_SMI_MIG = re.compile(r"^\s+MIG .*\(UUID: (MIG-[^)\s]+)\)\s*$")


def parse_smi_list(text: str) -> tuple[str, ...]:
    """The UUIDs of ``nvidia-smi -L``: each GPU's, or where a GPU is in MIG mode, each of its MIG slices'."""
    found: list[list[str]] = []  # per GPU: its UUID, then its MIG slices' UUIDs
    for line in text.splitlines():
        if m := _SMI_GPU.match(line):
            found.append([m.group(1)])
        elif (m := _SMI_MIG.match(line)) and found:
            found[-1].append(m.group(1))
    return tuple(uuid for gpu in found for uuid in (gpu[1:] or gpu[:1]))


def _smi_list() -> tuple[str | None, str]:
    """``nvidia-smi -L``'s output, or None and why not."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi is not on PATH"
    try:
        done = subprocess.run(
            [smi, "-L"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=_SMI_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvidia-smi -L did not answer ({e})"
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()
        return None, f"nvidia-smi -L: {said[0] if said else f'exit status {done.returncode}'}"
    return done.stdout, "nvidia-smi -L"


def find_gpus(
    environ: Mapping[str, str] | None = None, smi: Callable[[], tuple[str | None, str]] = _smi_list
) -> Gpus:
    """The GPUs to spread the children over (see the module's docstring)."""
    environ = os.environ if environ is None else environ
    if VISIBLE_ENV in environ:
        return parse_visible(environ[VISIBLE_ENV])
    text, source = smi()
    if text is None:
        return Gpus((), source)
    found = parse_smi_list(text)
    return Gpus(found, source) if found else Gpus((), f"{source} lists no GPU")


def assign(jobs: int, devices: Sequence[str]) -> tuple[str | None, ...]:
    """Each of ``jobs`` slots' ``CUDA_VISIBLE_DEVICES``: slot ``i`` gets ``devices[i % len(devices)]``; None without any."""
    check_jobs(jobs)
    if not devices:
        return (None,) * jobs
    return tuple(devices[i % len(devices)] for i in range(jobs))


def check_jobs(jobs: object) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CourseError(f"the number of jobs must be a whole number of at least 1 (got {jobs!r})")
    return jobs


def run_parallel(
    items: Sequence[Item],
    run: Callable[[Item, str | None], Result],
    *,
    jobs: int,
    devices: Sequence[str] = (),
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    done: Callable[[Item, Result | None], object] | None = None,
) -> dict[Item, Result | None]:
    """``run(item, device)`` for each distinct item, ``jobs`` at a time; see the module's docstring.

    Returns each item's result, None for an item whose turn came at or after
    ``deadline`` (on ``clock``), in the order of ``items``.
    """
    check_jobs(jobs)
    distinct = list(dict.fromkeys(items))
    slots: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    for device in assign(jobs, devices):
        slots.put(device)

    def job(item: Item) -> Result | None:
        if deadline is not None and clock() >= deadline:
            return None
        device = slots.get()  # one is free: as many slots as threads
        try:
            return run(item, device)
        finally:
            slots.put(device)

    results: dict[Item, Result | None] = {}
    pool = ThreadPoolExecutor(max_workers=min(jobs, max(1, len(distinct))), thread_name_prefix="course-grade")
    try:
        futures = {pool.submit(job, item): item for item in distinct}  # taken in this order
        for future in as_completed(futures):
            item = futures[future]
            results[item] = future.result()
            if done is not None:
                done(item, results[item])
    except BaseException:
        # An error, or an interrupt: nothing more starts, and it is raised now; the children running
        # end within their own limits (and the interpreter waits for their threads before it exits).
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return {item: results[item] for item in distinct}
