"""The grader's GPU worker on this machine: a stand-in worker that speaks the protocol, no GPU.

What is counted, never timed: which worker process ran each piece (its pid and a
token of its own: in bubblewrap's pid namespace every worker has the same pid),
how many workers were started, and each piece's outcome. The stand-in reads
each request's source and does what the text says: pass, fault (and leave,
as the real worker does after a sticky error), hang, die without a word,
flood its output, print another request's result, or report a large CPU
time. The real worker's request loop (``_child.serve``) is run in this
process with a stand-in for the run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from course.errors import CourseError
from course.exercises.coding_check import find_compiler
from course.lessons import get_lesson
from course.quiz.code_runner import CodeRunner
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.parallel import Gpus
from course.quiz.submission import Submission, write_submission
from course.tryout import _child
from course.tryout.sandbox import PROTOCOL_PREFIX
from course.tryout.worker import GpuWorker
from course.tryout.workspace import WORKSPACE_ENV

LESSON = get_lesson("day78")

STAND_IN = f"""\
import json, os, sys, time
P = {PROTOCOL_PREFIX!r}
ME = f"{{os.getpid()}}-{{os.urandom(8).hex()}}"
def emit(event):
    sys.stdout.write(P + json.dumps(event) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    n, text = request["id"], open(request["source"]).read()
    if "DIE" in text:
        os._exit(3)
    if "STALE" in text:  # a line of another request first: not this one's result
        emit({{"event": "result", "outcome": "passed", "request": n - 1}})
    emit({{"event": "compiled", "summary": "s", "request": n}})
    if "HANG" in text:
        time.sleep(120)
    if "FLOOD" in text:
        sys.stdout.write("x" * (9 << 20) + "\\n")
        sys.stdout.flush()
        time.sleep(120)
    emit({{"event": "line", "text": f"pid {{ME}} device {{os.environ.get('CUDA_VISIBLE_DEVICES')}}", "request": n}})
    if "FAULT" in text:
        emit({{"event": "result", "outcome": "fault", "error": "cudaErrorIllegalAddress",
              "error_name": "cudaErrorIllegalAddress", "request": n, "leaving": True}})
        os._exit(0)
    passed = "WRONG" not in text
    cpu = 500.0 if "HUNGRY" in text else 0.1
    emit({{"event": "result", "outcome": "passed" if passed else "failed-check", "line": "L", "check": "c",
          "mismatch": None, "request": n, "cpu_s": cpu, "leaving": False}})
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> list[str]:
    script = tmp_path / "worker.py"
    script.write_text(STAND_IN, encoding="utf-8")
    return [sys.executable, str(script)]


def _run_all(worker: GpuWorker, tmp_path: Path, texts: list[str], timeout_s: float = 30.0):
    """Each text as a source, in turn: (outcome, pid or None) per text."""
    got = []
    for n, text in enumerate(texts):
        path = tmp_path / f"piece{n}.cu"
        path.write_text(text, encoding="utf-8")
        result = worker.run(path, timeout_s=timeout_s)
        pids = [line.split()[1] for line in result.output if line.startswith("pid ")]
        got.append((result.outcome, pids[0] if pids else None))
    return got


def test_one_worker_runs_piece_after_piece_until_one_faults_then_a_new_one_takes_over(stand_in, tmp_path):
    with GpuWorker(LESSON, command=stand_in) as worker:
        got = _run_all(worker, tmp_path, ["ok a", "WRONG b", "ok c", "FAULT d", "ok e", "ok f"])
        assert [o for o, _ in got] == ["passed", "failed-check", "passed", "fault", "passed", "passed"]
        first, second = {p for _, p in got[:4]}, {p for _, p in got[4:]}
        assert len(first) == 1 and len(second) == 1 and first != second  # the fault's worker ran d last
        assert (worker.started, worker.served) == (2, 6)


def test_a_hang_is_stopped_at_its_limit_and_only_that_piece_is_a_timeout(stand_in, tmp_path):
    with GpuWorker(LESSON, command=stand_in) as worker:
        got = _run_all(worker, tmp_path, ["ok a", "HANG b", "ok c"], timeout_s=1.0)
        assert [o for o, _ in got] == ["passed", "timeout", "passed"]
        assert got[0][1] != got[2][1] and worker.started == 2


def test_a_worker_that_dies_is_never_blamed_on_the_next_piece(stand_in, tmp_path):
    """A piece that kills its worker before any event: run again once in a new worker, then "crashed"."""
    with GpuWorker(LESSON, command=stand_in) as worker:
        got = _run_all(worker, tmp_path, ["ok a", "DIE b", "ok c"])
        assert [o for o, _ in got] == ["passed", "crashed", "passed"]
        # a's worker, then b once more in a fresh one (it died again), then c's.
        assert worker.started == 3 and worker.served == 2


def test_a_flood_is_cut_at_the_bound_and_another_requests_line_is_not_this_ones(stand_in, tmp_path):
    with GpuWorker(LESSON, command=stand_in) as worker:
        got = _run_all(worker, tmp_path, ["FLOOD a", "STALE WRONG b", "ok c"])
        assert [o for o, _ in got] == ["crashed", "failed-check", "passed"]
        assert worker.started == 2


def test_a_worker_near_its_cpu_allowance_is_replaced_before_the_next_piece(stand_in, tmp_path):
    with GpuWorker(LESSON, command=stand_in, recycle_cpu_s=100.0) as worker:
        got = _run_all(worker, tmp_path, ["ok a", "HUNGRY b", "ok c", "ok d"])
        assert [o for o, _ in got] == ["passed"] * 4
        assert got[0][1] == got[1][1] != got[2][1] == got[3][1] and worker.started == 2


def test_the_worker_is_shown_its_device_and_closing_ends_it(stand_in, tmp_path):
    worker = GpuWorker(LESSON, command=stand_in, device="GPU-abc")
    path = tmp_path / "p.cu"
    path.write_text("ok", encoding="utf-8")
    result = worker.run(path, timeout_s=30.0)
    assert result.outcome == "passed" and result.output[0].endswith("device GPU-abc")
    session = worker._session
    assert session is not None and session.alive
    worker.close()
    assert not session.alive and session.proc.returncode is not None
    with pytest.raises(CourseError, match="timeout_s must be a positive number"):
        worker.run(path, timeout_s=0)


# ---------------------------------------------------------------------------
# The real worker's request loop, with a stand-in run.
# ---------------------------------------------------------------------------
def test_serve_answers_each_request_under_its_id_and_leaves_after_a_fault(monkeypatch, tmp_path):
    ran: list[str] = []

    def run(lesson_id, source_path, emit, lesson_constants=False):
        text = source_path.read_text()
        ran.append(text)
        assert lesson_constants  # a piece's run always takes the lesson's constants
        emit({"event": "compiled", "summary": "s"})
        if text == "boom":
            raise RuntimeError("the check itself failed")
        return {"outcome": {"f": "fault", "w": "failed-check"}.get(text, "passed")}

    monkeypatch.setattr(_child, "run", run)
    events: list[dict] = []
    requests = []
    for n, text in enumerate(["p", "w", "f", "after"]):
        (tmp_path / f"{n}.cu").write_text(text)
        requests.append(json.dumps({"id": n, "source": str(tmp_path / f"{n}.cu")}) + "\n")
    _child.serve("day78", events.append, iter(["\n", *requests]))
    assert ran == ["p", "w", "f"]  # it left after the fault: "after" goes to a new worker
    results = [e for e in events if e["event"] == "result"]
    assert [(e["request"], e["outcome"], e["leaving"]) for e in results] == [
        (0, "passed", False),
        (1, "failed-check", False),
        (2, "fault", True),
    ]
    assert all(e["request"] == e2["request"] for e, e2 in zip(events[::2], events[1::2], strict=True))
    assert all(isinstance(e["cpu_s"], float) for e in results)

    events.clear()
    (tmp_path / "b.cu").write_text("boom")
    _child.serve(
        "day78", events.append, iter([json.dumps({"id": 9, "source": str(tmp_path / "b.cu")}), "{}"])
    )
    (crash,) = [e for e in events if e["event"] == "result"]
    assert crash["outcome"] == "crashed" and crash["request"] == 9 and crash["leaving"]
    assert "the check itself failed" in crash["message"]


def test_a_request_that_is_not_json_gets_a_crashed_result_and_the_worker_leaves(tmp_path):
    events: list[dict] = []
    _child.serve("day78", events.append, iter(["not json\n", json.dumps({"id": 1, "source": os.devnull})]))
    assert [(e["outcome"], e["request"], e["leaving"]) for e in events] == [("crashed", None, True)]


# ---------------------------------------------------------------------------
# The grader through workers: serial and side by side, the same outcomes.
# ---------------------------------------------------------------------------
QUIZ = """\
[quiz]
id = "workers"
title = "Workers"
lesson = "day78"

[[questions]]
id = "code1"
type = "code"
prompt = "Write coreOffset."
points = 1
reference = "PTX ISA, Canonical Layouts"
exercise = "core-offset"
explanation = "Cores along K first."
"""
RIGHT = "return ((mn / 8) * (kTileK / 8) + k / 8) * 64 + (mn % 8) * 8 + (k % 8);"


def test_the_grader_runs_its_gpu_checks_in_workers_with_the_serial_outcomes(stand_in, tmp_path, monkeypatch):
    """Faults and hangs among passes: each piece's outcome is the stand-in's verdict on it, at jobs 1 and 3."""
    if find_compiler() is None:  # the CPU check runs beside each GPU check
        pytest.skip("no C++ compiler on PATH (c++, g++ or clang++): the CPU check cannot run")
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    (tmp_path / "key.toml").write_text(QUIZ, encoding="utf-8")
    key = load_quiz(tmp_path / "key.toml")
    pieces = {
        "a": f"// right\n{RIGHT}",
        "b": "// WRONG\nreturn 0;",
        "c": f"// FAULT\n{RIGHT}",
        "d": f"// right again\n{RIGHT}",
        "e": f"// HANG\n{RIGHT}",
        "f": f"// right\n{RIGHT}",  # a's piece: run once
        "g": f"// and right\n{RIGHT}",
    }
    want = {"a": "passed", "b": "failed-check", "c": "fault", "d": "passed", "e": "timeout", "f": "passed"}
    want["g"] = "passed"
    for learner, piece in pieces.items():
        write_submission(
            Submission(key.id, key.version, learner, "2026-12-01T10:00:00+00:00", {"code1": piece}, {}),
            tmp_path / "subs",
        )
    for jobs in (1, 3):
        with CodeRunner(use_gpu=True, timeout_s=2.0, worker_command=stand_in) as runner:
            report = grade_submissions(
                key, tmp_path / "subs", run_code=runner, jobs=jobs, gpus=Gpus(("0", "1"), "two test GPUs")
            )
            got = {r.learner: r.items[0].outcome for r in report.results}
            assert got == want, jobs
            assert runner.runs == 6  # f's piece is a's
            # One worker per slot at most, and a new one after the fault and after the hang: no more.
            started = runner.workers_started
            assert started == 3 if jobs == 1 else started <= jobs + 2
            assert all(w._session is None or w._session.alive for w in runner._all)
        # Closed: every worker child ended, and the count still says how many there were.
        assert runner._all and all(w._session is None for w in runner._all)
        assert runner.workers_started == started
