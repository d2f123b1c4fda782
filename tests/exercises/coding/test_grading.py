"""Code questions in a quiz: authored, submitted and graded by running (course.quiz + course.quiz.code_runner)."""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from course.errors import CourseError
from course.exercises.coding_check import CodingResult
from course.kernel import compile as course_compile
from course.lessons import get_lesson
from course.quiz.code_runner import CodeRunner
from course.quiz.grade import (
    BUDGET_CAP_S,
    BUDGET_NOTE,
    default_budget,
    grade_submissions,
    run_order,
    write_reports,
)
from course.quiz.loader import load_quiz, parse_quiz
from course.quiz.model import MAX_CODE_BYTES, Code, CodeScoredByRunning, QuizError
from course.quiz.parallel import Gpus
from course.quiz.release import release_quiz
from course.quiz.submission import Submission, write_submission
from course.quiz.widgets import show_quiz
from course.tryout.sandbox import PROTOCOL_PREFIX

needs_cxx = pytest.mark.usefixtures("cxx")
LESSON = get_lesson("day78")
REFERENCE = "return ((mn / 8) * (kTileK / 8) + k / 8) * 64 + (mn % 8) * 8 + (k % 8);"

QUIZ = textwrap.dedent(
    """
    [quiz]
    id = "day78-graded"
    title = "Day 78, graded"
    lesson = "day78"

    [[questions]]
    id = "q1"
    type = "single"
    prompt = "How many threads in a warpgroup?"
    points = 1
    reference = "PTX ISA, Warpgroup"
    options = [{ id = "a", text = "128" }, { id = "b", text = "32" }]
    answer = "a"
    explanation = "Four warps."

    [[questions]]
    id = "code1"
    type = "code"
    prompt = "Write coreOffset."
    points = 4
    reference = "PTX ISA, Canonical Layouts"
    exercise = "core-offset"
    explanation = "Cores along K first."
    """
)


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "key.toml"
    path.write_text(QUIZ)
    return load_quiz(path)


def submit(folder, quiz, learner, responses, when="2026-11-01T10:00:00+00:00"):
    return write_submission(Submission(quiz.id, quiz.version, learner, when, responses, {}), folder)


def test_a_code_question_loads_and_survives_release(key, tmp_path):
    code = key.question("code1")
    assert isinstance(code, Code) and code.lesson == "day78" and code.exercise == "core-offset"
    learner = release_quiz(key.path, tmp_path / "learner.toml")
    assert learner.version == key.version
    assert isinstance(learner.question("code1"), Code) and learner.question("code1").explanation is None
    with pytest.raises(CodeScoredByRunning, match="scored by running"):
        code.fraction("return 0;")


def test_a_code_question_naming_no_exercise_is_refused_with_its_place():
    with pytest.raises(QuizError) as e:
        parse_quiz(QUIZ.replace('exercise = "core-offset"', 'exercise = "no-such"'), "k.toml")
    text = str(e.value)
    assert "k.toml:" in text and "code1" in text and "no coding exercise 'no-such'" in text


def test_a_code_response_is_text_of_bounded_size(key):
    code = key.question("code1")
    code.check_response("return 0;")
    for bad, why in ((42, "as text"), ("x" * (MAX_CODE_BYTES + 1), "at most"), ("a\x00", "NUL")):
        with pytest.raises(CourseError, match=why):
            code.check_response(bad)


def test_the_quiz_panel_offers_the_learners_piece_and_submits_it(key, tmp_path):
    from course.exercises.coding import get_exercise, learner_file

    f = learner_file(LESSON, get_exercise(LESSON, "core-offset"))
    f.save("return mn;  // mine")
    panel = show_quiz(key.path, mode="graded", learner_id="alice", submissions_dir=tmp_path / "subs")
    assert panel.panels["code1"].response() == "return mn;  // mine"
    panel.panels["q1"].set_response("a")
    path = panel.submit()
    saved = json.loads(path.read_text())
    assert saved["responses"] == {"q1": "a", "code1": "return mn;  // mine"}
    assert "score" not in json.dumps(saved)


@needs_cxx
def test_grading_runs_each_code_response_and_reports_what_it_did(key, tmp_path, monkeypatch):
    def no_nvrtc(*_a, **_k):
        raise AssertionError("the grader compiled a learner's code in its own process")

    monkeypatch.setattr(course_compile, "compile_offline", no_nvrtc)
    subs = tmp_path / "subs"
    submit(subs, key, "alice", {"q1": "a", "code1": REFERENCE})
    submit(subs, key, "bob", {"q1": "a", "code1": "return mn * 64 + k;"})
    submit(subs, key, "carol", {"code1": "return mn +;"})
    submit(subs, key, "dave", {"code1": "volatile int spin = 1; while (spin) {} return 0;"})
    submit(subs, key, "erin", {"code1": REFERENCE})  # the same code as alice's: run once
    submit(subs, key, "frank", {"q1": "b"})
    marker = "// <<< core-offset: your code ends above this line"
    submit(subs, key, "gina", {"code1": f"return 0;\n{marker}\nreturn 1;"})
    monkeypatch.setattr("course.exercises.coding_check.CPU_RUN_TIMEOUT_S", 2.0)
    runner = CodeRunner(use_gpu=False)
    said: list[tuple[int, int]] = []
    report = grade_submissions(
        key, subs, run_code=runner, progress=lambda done, total: said.append((done, total))
    )
    by = {r.learner: r for r in report.results}
    assert {k: v.total for k, v in by.items()} == {
        "alice": 5.0, "bob": 1.0, "carol": 0.0, "dave": 0.0, "erin": 4.0, "frank": 0.0, "gina": 0.0
    }  # fmt: skip
    code = {k: v.items[1] for k, v in by.items()}
    assert code["alice"].outcome == "passed"
    assert code["bob"].outcome == "failed-check" and "should be" in code["bob"].note
    assert code["carol"].outcome == "compile-error" and "your code, line 1" in code["carol"].note
    assert code["dave"].outcome == "timeout"
    assert code["frank"].outcome == "" and code["frank"].score == 0
    assert code["gina"].outcome == "refused" and "marker" in code["gina"].note
    assert runner.runs == 4  # alice and erin share one run; frank had nothing; gina was refused before
    assert said == [(n, 6) for n in range(1, 7)]  # six code answers (frank gave none), each told once
    written = write_reports(report, tmp_path / "out")
    rows = list(csv.DictReader(io.StringIO(written["long"].read_text(encoding="utf-8"))))
    bob = next(r for r in rows if r["learner"] == "bob" and r["question"] == "code1")
    assert bob["response"] == "return mn * 64 + k;" and bob["note"].startswith("failed-check (checked cpu)")
    items = json.loads(written["items_json"].read_text())["items"]
    dist = next(i for i in items if i["question"] == "code1")["distribution"]
    assert dist == {
        "passed": 2,
        "failed-check": 1,
        "compile-error": 1,
        "timeout": 1,
        "(blank)": 1,
        "refused": 1,
    }


# One question's answers of every kind, distinct texts: what a class sends in.
MIX = {
    "alice": REFERENCE,
    "ben": "return ((mn / 8) * (kTileK / 8) + (k / 8)) * 64 + (mn % 8) * 8 + k % 8;  // mine",
    "bob": "return mn * 64 + k;",
    "cara": "return ((k / 8) * (kTileK / 8) + mn / 8) * 64 + (mn % 8) * 8 + (k % 8);",
    "carol": "return mn +;",
    "dave": "volatile int spin = 1; while (spin) {} return 0;",
    "dora": f"return ({REFERENCE[7:-1]}) * 2048;",
    "erin": REFERENCE,  # alice's: run once
    "gina": "return 0;\n// <<< core-offset: your code ends above this line\nreturn 1;",
}


@needs_cxx
def test_grading_side_by_side_gives_every_outcome_serial_grading_gives(key, tmp_path, monkeypatch):
    subs = tmp_path / "subs"
    for learner, piece in MIX.items():
        submit(subs, key, learner, {"q1": "a", "code1": piece})
    submit(subs, key, "frank", {"q1": "b"})
    monkeypatch.setattr("course.exercises.coding_check.CPU_RUN_TIMEOUT_S", 2.0)

    def grade(jobs: int, gpus: Gpus) -> tuple[list[tuple[object, ...]], list[tuple[int, int]], int]:
        runner = CodeRunner(use_gpu=False)
        said: list[tuple[int, int]] = []
        report = grade_submissions(
            key, subs, run_code=runner, progress=lambda *p: said.append(p), jobs=jobs, gpus=gpus
        )
        rows = [(r.learner, i.question, i.score, i.outcome, i.note) for r in report.results for i in r.items]
        return rows + [("flag", f.learner, f.reason) for f in report.flagged], said, runner.runs

    serial = grade(1, Gpus((), "none"))
    side_by_side = grade(4, Gpus(("0", "1"), "a test's two GPUs"))
    assert side_by_side == serial
    rows, said, runs = serial
    outcomes = {row[0]: row[3] for row in rows if row[1] == "code1"}
    assert outcomes == {
        "alice": "passed", "ben": "passed", "bob": "failed-check", "cara": "failed-check",
        "carol": "compile-error", "dave": "timeout", "dora": "failed-check", "erin": "passed",
        "frank": "", "gina": "refused",
    }  # fmt: skip
    assert runs == 7  # alice and erin share one run; frank gave none; gina was refused before running
    assert said == [(n, 9) for n in range(1, 10)]  # each answer told once, in order


def test_side_by_side_the_pieces_with_a_loop_start_first_and_serially_learner_order_stays():
    keys = [
        ("day78", "core-offset", "return 1;"),
        ("day78", "core-offset", "volatile int s = 1; while (s) {} return 0;"),
        ("day78", "core-offset", "return 2;  // for the tile"),  # a comment's "for": early, harmlessly
        ("day78", "core-offset", "return fortune;"),  # not the keyword
        ("day78", "core-offset", "int r = 0; do { r++; } while (r < 3); return r;"),
    ]
    assert run_order(keys, 1) == keys
    assert run_order(keys, 4) == [keys[1], keys[2], keys[4], keys[0], keys[3]]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_grader_hands_the_scheduler_the_pieces_in_run_order(key, tmp_path, monkeypatch, jobs):
    from course.quiz import grade as grade_module

    handed: list[list[str]] = []
    real = grade_module.run_parallel

    def recording(items, *a, **kw):
        handed.append([piece for _, _, piece in items])
        return real(items, *a, **kw)

    monkeypatch.setattr(grade_module, "run_parallel", recording)

    def runner(q, piece, device=None):
        return CodingResult("day78", "core-offset", "passed", "cpu", "matches")

    subs = tmp_path / "subs"
    for name, piece in (
        ("a", "return 1;"),
        ("b", "while (0) {} return 2;"),
        ("c", "return 3;"),
        ("d", "return 1;"),
    ):
        submit(subs, key, name, {"code1": piece})
    report = grade_submissions(key, subs, run_code=runner, jobs=jobs)
    learner_order = ["return 1;", "while (0) {} return 2;", "return 3;"]  # d's piece is a's: once
    assert handed == [learner_order if jobs == 1 else [learner_order[1], learner_order[0], learner_order[2]]]
    assert [r.items[1].outcome for r in report.results] == ["passed"] * 4


def _device_child(tmp_path: Path) -> list[str]:
    """A stand-in GPU child that prints the CUDA_VISIBLE_DEVICES it was given, then ends without a result."""
    body = (
        "import os\n"
        "print(P + json.dumps({'event': 'line', 'text': os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')}), flush=True)\n"
    )
    return _child(tmp_path, body)


def test_each_gpu_child_is_shown_the_one_gpu_of_its_slot(key, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    real = CodeRunner(use_gpu=True, timeout_s=30.0, command=_device_child(tmp_path))
    seen: list[tuple[str | None, tuple[str, ...]]] = []

    def runner(q, piece, device=None):
        result = real(q, piece, device=device)
        seen.append((device, result.gpu.output))
        return result

    subs = tmp_path / "subs"
    for n in range(6):
        submit(subs, key, f"l{n}", {"code1": f"return {n};"})
    report = grade_submissions(key, subs, run_code=runner, jobs=4, gpus=Gpus(("0", "1"), "a test's two GPUs"))
    assert len(seen) == 6 and {device for device, _ in seen} == {"0", "1"}
    assert all(output == (device,) for device, output in seen), seen  # that one, and nothing else
    assert [r.items[1].outcome for r in report.results] == ["crashed"] * 6  # the stand-in gives no result
    # Without a device, the child sees what this process sees.
    assert real(key.question("code1"), "return 99;").gpu.output == ("0,1",)


class _Clock:
    """A clock the stand-in runner moves: each run takes ``step`` seconds, whatever the machine does."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        return self.now


def test_the_grading_run_stops_running_code_when_its_budget_is_spent(key, tmp_path):
    clock = _Clock(10.0)
    ran: list[str] = []

    def runner(q, piece, device=None):
        ran.append(piece)
        clock.now += clock.step
        return CodingResult("day78", "core-offset", "passed", "cpu", "matches")

    subs = tmp_path / "subs"
    for name in ("a1", "a2", "a3", "a4", "a5"):
        submit(subs, key, name, {"q1": "a", "code1": f"return {name[1]};"})
    submit(subs, key, "a6", {"q1": "a", "code1": "return 1;"})  # a1's piece: it ran before the budget ran out
    # Deadline 1025: a1 (at 1000), a2 (1010), a3 (1020) run; at 1030 the budget is spent.
    report = grade_submissions(key, subs, run_code=runner, budget_s=25.0, clock=clock)
    assert ran == ["return 1;", "return 2;", "return 3;"]  # a6's piece is a1's: run once, scored for both
    by = {r.learner: r for r in report.results}
    assert {k: v.total for k, v in by.items()} == {
        "a1": 5.0,
        "a2": 5.0,
        "a3": 5.0,
        "a4": 1.0,
        "a5": 1.0,
        "a6": 5.0,
    }
    for late in ("a4", "a5"):
        assert by[late].items[1].note == BUDGET_NOTE and by[late].items[1].outcome == "not-run"
    flagged = {f.learner for f in report.flagged if BUDGET_NOTE in f.reason}
    assert flagged == {"a4", "a5"}
    written = write_reports(report, tmp_path / "out")
    rows = list(csv.DictReader(io.StringIO(written["flagged"].read_text(encoding="utf-8"))))
    assert {r["learner"] for r in rows if BUDGET_NOTE in r["reason"]} == {"a4", "a5"}
    assert len(list(csv.DictReader(io.StringIO(written["long"].read_text(encoding="utf-8"))))) == 12


def test_the_default_budget_grows_with_the_distinct_pieces_and_is_capped(key, tmp_path):
    assert default_budget(3, 20.0) == 3 * 60.0 + 60.0 and default_budget(0, 20.0) == 60.0 + 60.0
    assert default_budget(10**6, 20.0) == BUDGET_CAP_S
    clock = _Clock(19.0)

    def runner(q, piece, device=None):
        clock.now += clock.step
        return CodingResult("day78", "core-offset", "passed", "cpu", "matches")

    runner.timeout_s = 20.0  # as CodeRunner says its limit for one child
    subs = tmp_path / "subs"
    for name in ("b1", "b2", "b3"):
        submit(subs, key, name, {"code1": f"return {name[1]};"})
    report = grade_submissions(key, subs, run_code=runner, clock=clock)  # 3 pieces x 20 s: all run
    assert [r.items[1].outcome for r in report.results] == ["passed"] * 3
    for bad in (0, -1.0):
        with pytest.raises(CourseError, match="time budget must be a positive number"):
            grade_submissions(key, subs, run_code=runner, budget_s=bad, clock=clock)


def _child(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(f"import json, time\nP = {PROTOCOL_PREFIX!r}\n{body}")
    return [sys.executable, str(script)]


def test_on_a_gpu_machine_each_piece_runs_in_the_sandbox_child_with_its_limit(key, tmp_path):
    """A stand-in child that compiles and then hangs: the grader stops it at the limit and goes on."""
    subs = tmp_path / "subs"
    submit(subs, key, "hangs", {"code1": "return 0;"})
    submit(subs, key, "other", {"code1": "return 1;"})
    body = "print(P + json.dumps({'event': 'compiled', 'summary': 's'}), flush=True)\ntime.sleep(60)\n"
    runner = CodeRunner(use_gpu=True, timeout_s=1.0, command=_child(tmp_path, body))
    report = grade_submissions(key, subs, run_code=runner)
    assert [r.items[1].outcome for r in report.results] == ["timeout", "timeout"]
    assert "hung and was stopped after 1 s" in report.results[0].items[1].note


def test_a_piece_no_check_can_run_here_is_flagged_not_passed(key, tmp_path, monkeypatch):
    import dataclasses

    from course.quiz import code_runner as coding_grade

    real = coding_grade.get_exercise
    monkeypatch.setattr(coding_grade, "get_exercise", lambda *a: dataclasses.replace(real(*a), cpu=None))
    subs = tmp_path / "subs"
    submit(subs, key, "alice", {"code1": REFERENCE})
    report = grade_submissions(key, subs, run_code=CodeRunner(use_gpu=False))
    (alice,) = report.results
    assert alice.items[1].outcome == "not-checked" and alice.items[1].score == 0
    assert any("could not be checked on this machine" in f.reason for f in report.flagged)


class _StandInRunner:
    """In place of CodeRunner for the command line: every piece passes at once."""

    timeout_s = 20.0
    devices: list[str | None] = []

    made: list[dict] = []

    def __init__(self, **kw) -> None:
        self.made.append(kw)

    def __call__(self, q, piece, device=None):
        self.devices.append(device)
        return CodingResult("day78", "core-offset", "passed", "cpu", "matches")

    def close(self) -> None:
        """The grader ends the runner it made (CodeRunner's workers)."""

    def sandbox(self) -> str:
        """Where the code runs, as the command line says before grading (CodeRunner asks bubblewrap)."""
        return "in a stand-in"


@pytest.mark.parametrize("asked", [True, False])
def test_quiz_grade_shows_a_bar_of_the_code_answers_when_asked_and_passes_the_budget(
    key, tmp_path, monkeypatch, capsys, asked
):
    from course.cli import main
    from course.cli import quiz as cli_quiz

    monkeypatch.setattr("course.quiz.code_runner.CodeRunner", _StandInRunner)
    monkeypatch.setattr(_StandInRunner, "devices", [])
    monkeypatch.setattr(_StandInRunner, "made", [])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    budgets: list[object] = []
    jobs: list[object] = []

    def grade(*a, **kw):
        budgets.append(kw["budget_s"])
        jobs.append(kw["jobs"])
        return grade_submissions(*a, **kw)

    monkeypatch.setattr(cli_quiz, "grade_submissions", grade)
    subs = tmp_path / "subs"
    for name in ("c1", "c2"):
        submit(subs, key, name, {"code1": f"return {name[1]};"})
    argv = ["quiz", "grade", str(key.path), str(subs), "-o", str(tmp_path / "out"), "--budget", "90"]
    assert main(argv + (["--progress"] if asked else []) + ["--jobs", "3"]) == 0
    err = capsys.readouterr().err
    assert budgets == [90.0] and jobs == [3]
    assert "grading code: 3 answers at a time; 2 GPUs (0, 1) from CUDA_VISIBLE_DEVICES='0,1'" in err
    assert sorted(_StandInRunner.devices) == ["0", "1"]  # one answer on each
    # stderr here is not a terminal: the bar shows only when asked
    assert ("code answers" in err and "2/2" in err) == asked, err
    # Workers by default; --one-off asks for a new child per answer's GPU check.
    assert main(argv[:5] + [str(tmp_path / "o1"), "--one-off"]) == 0
    assert _StandInRunner.made == [
        {"workers": True, "unconfined": False},
        {"workers": False, "unconfined": False},
    ]
    assert (
        main(["quiz", "grade", str(key.path), str(subs), "-o", str(tmp_path / "o2"), "--budget", "-1"]) == 2
    )
    assert "time budget must be a positive number of seconds" in capsys.readouterr().err
    assert main(["quiz", "grade", str(key.path), str(subs), "-o", str(tmp_path / "o3"), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1 (got 0)" in capsys.readouterr().err
