"""The grader's scheduler and GPU list (course/quiz/parallel.py), with stand-in runners.

Nothing here depends on how fast this machine is: concurrency is counted and
forced with barriers and events, the budget runs on an injected clock, and
every wait has a generous bound that only stops a broken run from hanging.
"""

from __future__ import annotations

import math
import threading

import pytest

from course.errors import CourseError
from course.quiz.parallel import Gpus, assign, find_gpus, parse_smi_list, parse_visible, run_parallel

BOUND_S = 60.0  # only a broken scheduler waits this long

UUID0 = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"
UUID1 = "GPU-0a1b2c3d-0000-1111-2222-333344445555"
SMI = f"""\
GPU 0: NVIDIA H200 (UUID: {UUID0})
GPU 1: NVIDIA H200 (UUID: {UUID1})
  MIG 1g.18gb     Device  0: (UUID: MIG-11111111-2222-3333-4444-555555555555)
  MIG 1g.18gb     Device  1: (UUID: MIG-66666666-7777-8888-9999-000000000000)
"""


@pytest.mark.parametrize(
    ("value", "devices", "ignored"),
    [
        ("0", ("0",), ""),
        ("0,1", ("0", "1"), ""),
        (" 1 , 0 ", ("1", "0"), ""),  # CUDA's order is kept: 1 comes first
        ("0,0,1", ("0", "1"), ""),  # named twice, used once
        ("0,2,-1,1", ("0", "2"), "-1,1"),  # CUDA shows only what comes before an invalid entry
        ("", (), ""),  # empty: no GPU
        ("-1", (), "-1"),
        ("NoDevFiles", (), "NoDevFiles"),
        (f"{UUID0},{UUID1}", (UUID0, UUID1), ""),
        ("MIG-11111111-2222-3333-4444-555555555555", ("MIG-11111111-2222-3333-4444-555555555555",), ""),
        (f"MIG-{UUID0}/1/0,MIG-{UUID0}/2/0", (f"MIG-{UUID0}/1/0", f"MIG-{UUID0}/2/0"), ""),  # R450's form
        ("GPU-8932f937", ("GPU-8932f937",), ""),  # a UUID's prefix, which CUDA accepts when unique
    ],
)
def test_cuda_visible_devices_is_read_as_cuda_reads_it(value, devices, ignored):
    gpus = parse_visible(value)
    assert gpus.devices == devices and gpus.ignored == ignored
    assert "CUDA_VISIBLE_DEVICES" in gpus.source
    if ignored:
        assert f"CUDA ignores the rest, {ignored!r}" in gpus.describe() or not devices


def test_nvidia_smi_list_gives_each_gpu_or_each_of_its_mig_slices():
    assert parse_smi_list(SMI) == (
        UUID0,
        "MIG-11111111-2222-3333-4444-555555555555",
        "MIG-66666666-7777-8888-9999-000000000000",
    )
    assert parse_smi_list("No devices were found\n") == ()
    assert parse_smi_list("") == ()


def test_find_gpus_prefers_the_variable_and_asks_nvidia_smi_only_without_it():
    def no_smi() -> tuple[str | None, str]:
        raise AssertionError("nvidia-smi asked although CUDA_VISIBLE_DEVICES is set")

    assert find_gpus({"CUDA_VISIBLE_DEVICES": "1,0"}, no_smi).devices == ("1", "0")
    assert find_gpus({"CUDA_VISIBLE_DEVICES": ""}, no_smi).devices == ()
    assert find_gpus({}, lambda: (SMI, "nvidia-smi -L")).devices[0] == UUID0
    missing = find_gpus({}, lambda: (None, "nvidia-smi is not on PATH"))
    assert missing.devices == () and "every child sees what this process sees" in missing.describe()
    empty = find_gpus({}, lambda: ("No devices were found\n", "nvidia-smi -L"))
    assert empty.devices == () and "lists no GPU" in empty.source


@pytest.mark.parametrize(
    ("jobs", "devices", "slots"),
    [
        (4, ("0", "1"), ("0", "1", "0", "1")),
        (3, ("0", "1"), ("0", "1", "0")),
        (1, ("0", "1"), ("0",)),
        (2, (UUID0,), (UUID0, UUID0)),
        (3, (), (None, None, None)),
        (16, tuple(str(i) for i in range(8)), tuple(str(i % 8) for i in range(16))),
    ],
)
def test_each_slot_is_shown_one_gpu_round_robin(jobs, devices, slots):
    assert assign(jobs, devices) == slots
    if devices:  # no GPU gets more than its share
        assert max(slots.count(d) for d in devices) == math.ceil(jobs / len(devices))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_a_number_of_jobs_that_is_not_a_positive_whole_number_is_refused(bad):
    with pytest.raises(CourseError, match="number of jobs must be a whole number of at least 1"):
        assign(bad, ("0",))
    with pytest.raises(CourseError, match="number of jobs"):
        run_parallel(["a"], lambda item, device: item, jobs=bad)


def test_fewer_gpus_than_visible_are_the_first_ones_and_more_is_refused():
    gpus = Gpus(("0", "1"), "CUDA_VISIBLE_DEVICES='0,1'")
    assert gpus.first(1).devices == ("0",)
    with pytest.raises(CourseError, match="3 GPUs asked for, but 2 are visible"):
        gpus.first(3)


class _Counting:
    """A stand-in runner that counts how many run at once, overall and per device."""

    def __init__(self, wait_for: threading.Barrier | None = None) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.on: dict[str | None, int] = {}
        self.most_on: dict[str | None, int] = {}
        self.calls: list[tuple[str, str | None]] = []
        self.wait_for = wait_for

    def __call__(self, item: str, device: str | None) -> str:
        with self.lock:
            self.calls.append((item, device))
            self.now += 1
            self.most = max(self.most, self.now)
            self.on[device] = self.on.get(device, 0) + 1
            self.most_on[device] = max(self.most_on.get(device, 0), self.on[device])
        try:
            if self.wait_for is not None:
                self.wait_for.wait(BOUND_S)  # breaks (and fails the test) unless enough run at once
            return f"ran {item} on {device}"
        finally:
            with self.lock:
                self.now -= 1
                self.on[device] -= 1


@pytest.mark.parametrize("jobs", [1, 3, 4])
def test_exactly_jobs_run_at_once_and_never_more(jobs):
    items = [f"piece{i}" for i in range(jobs * 3)]
    runner = _Counting(threading.Barrier(jobs))  # each round of `jobs` meets at the barrier: all at once
    results = run_parallel(items, runner, jobs=jobs)
    assert runner.most == jobs
    assert results == {item: f"ran {item} on None" for item in items}  # in the order of the items
    assert sorted(i for i, _ in runner.calls) == sorted(items)


def test_the_children_are_spread_over_the_gpus_each_within_its_share():
    runner = _Counting(threading.Barrier(4))
    results = run_parallel([f"p{i}" for i in range(12)], runner, jobs=4, devices=("0", "1"))
    assert runner.most == 4 and runner.most_on == {"0": 2, "1": 2}  # both GPUs at once, two each
    assert {d for _, d in runner.calls} == {"0", "1"}
    assert all(results[item] == f"ran {item} on {device}" for item, device in runner.calls)


def test_identical_items_run_once():
    runner = _Counting()
    results = run_parallel(["a", "b", "a", "c", "b"], runner, jobs=2)
    assert sorted(i for i, _ in runner.calls) == ["a", "b", "c"]
    assert list(results) == ["a", "b", "c"]


def test_a_hang_holds_one_slot_while_the_others_finish():
    """The stand-in hangs until every other item is done: a scheduler that waited on it would never get there."""
    released = threading.Event()
    finished: list[str] = []
    items = ["hangs", *(f"p{i}" for i in range(7))]

    def run(item: str, device: str | None) -> str:
        if item == "hangs":
            released.wait(BOUND_S)  # its time limit, as far as this test goes
            return "timeout" if released.is_set() else "never released"
        return "passed"

    def done(item: str, result: str | None) -> None:
        finished.append(item)
        if len(finished) == len(items) - 1:
            released.set()  # everything else finished while the hang held its slot

    results = run_parallel(items, run, jobs=2, done=done)
    assert finished[-1] == "hangs" and results["hangs"] == "timeout"
    assert all(results[i] == "passed" for i in items[1:])


def test_once_the_deadline_passes_no_item_starts():
    now = [100.0]
    ran: list[str] = []

    def run(item: str, device: str | None) -> str:
        ran.append(item)
        now[0] += 10.0  # each run takes ten seconds of the injected clock
        return "passed"

    results = run_parallel(["a", "b", "c", "d"], run, jobs=1, deadline=125.0, clock=lambda: now[0])
    assert ran == ["a", "b", "c"] and results == {"a": "passed", "b": "passed", "c": "passed", "d": None}


def test_a_runner_error_stops_the_run_at_once_and_cancels_what_has_not_started():
    release = threading.Event()
    started: list[str] = []

    def run(item: str, device: str | None) -> str:
        started.append(item)
        if item == "broken":
            raise RuntimeError("the runner itself failed")
        release.wait(BOUND_S)  # held until the error is out: what is running does not delay it
        return "passed"

    try:
        with pytest.raises(RuntimeError, match="the runner itself failed"):
            run_parallel(["broken", "slow", *(f"p{i}" for i in range(20))], run, jobs=2)
        # broken, slow if its slot took it, and at most the one piece broken's freed slot took before
        # the rest were cancelled (each of those is held until the end)
        assert "broken" in started and len(started) <= 3, started
    finally:
        release.set()
