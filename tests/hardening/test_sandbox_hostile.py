"""Learners' code is graded only inside a sandbox (issue 36): both paths, confined and refused.

- Refused: where no sandbox works (``COURSE_SANDBOX=none``, or a PATH with
  no bwrap and no ``COURSE_BWRAP``), ``quiz grade`` runs no code answer:
  each scores 0, "not-run", flagged, with why and how to get a sandbox; the
  other questions are graded; ``--unconfined`` runs them and says so in
  every learner's flags and every code answer's note.
- Confined: with bubblewrap working (CI installs it; ``COURSE_REQUIRE_BWRAP=1``
  makes its absence a failure there), what a piece would do past the filter
  (with the filter and the link check taken away) reaches nothing outside:
  no planted submission, no read of the key, no signal to a process of the
  grader's, no connection to 127.0.0.1, no daemon left.
- The filter's message for what reaches libc without a header (block-scope
  ``extern`` of ``system``/``dlsym``/``kill``, lambdas and local classes
  calling them) through the grader: 0 with the line.
- Without a pid namespace, a daemon that killed its keeper is killed by the
  grader as subreaper (``course._confine.sweep_orphans``).
- ``#include`` of a file and of /dev/stdin through the GPU-less NVRTC check:
  refused before compiling; and with that refusal taken away, the NVRTC
  child in bubblewrap cannot see the file.
- ``course pages DEST`` with a FIFO or /dev/zero in a page's place, and a
  symlinked progress lock: a message, no hang.

Every limit is generous and every outcome deterministic: nothing here passes
or fails by being fast.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course import _confine
from course.cli import main
from course.exercises import coding_check
from course.quiz.code_runner import UNCONFINED_NOTE, CodeRunner
from course.quiz.grade import UNCONFINED_FLAG, grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission, write_submission

# The grading tests' graded quiz and its right answer, graded here inside the sandbox.
from tests.exercises.coding.test_grading import QUIZ, REFERENCE

REQUIRE_BWRAP_ENV = "COURSE_REQUIRE_BWRAP"


@pytest.fixture(autouse=True)
def _not_a_reaper_afterwards():
    """``quiz grade`` and section 4 make this process a subreaper for their run: never for the next test."""
    yield
    _confine.become_reaper(False)


@pytest.fixture
def cxx() -> str:
    """The C++ compiler of the CPU check: a failure under COURSE_REQUIRE_CXX (CI), else a skip."""
    found = coding_check.find_compiler()
    if found is None:
        if os.environ.get("COURSE_REQUIRE_CXX"):
            pytest.fail("COURSE_REQUIRE_CXX is set, but there is no C++ compiler on PATH")
        pytest.skip("no C++ compiler on PATH: the CPU check cannot run")
    return found


def _works() -> _confine.Sandbox:
    try:
        return _confine.sandbox_status()
    except Exception as e:  # noqa: BLE001 - COURSE_SANDBOX=bwrap where it cannot run: a reason
        return _confine.Sandbox(False, str(e))


@pytest.fixture
def bwrap(monkeypatch):
    """Bubblewrap working here: a failure under COURSE_REQUIRE_BWRAP (CI), else a skip with the reason."""
    monkeypatch.setenv(_confine.SANDBOX_ENV, "auto")
    box = _works()
    if not box.works:
        if os.environ.get(REQUIRE_BWRAP_ENV):
            pytest.fail(f"{REQUIRE_BWRAP_ENV} is set, but {box.detail}")
        pytest.skip(f"bubblewrap cannot run here: {box.detail}")
    return box


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "key" / "key.toml"
    path.parent.mkdir()
    path.write_text(QUIZ)
    return load_quiz(path)


def submit(folder: Path, quiz, learner: str, responses: dict) -> Path:
    return write_submission(
        Submission(quiz.id, quiz.version, learner, "2026-11-01T10:00:00+00:00", responses, {}), folder
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------
# 1. Refused where no sandbox works; --unconfined is loud.
# ---------------------------------------------------------------------------
def _no_bwrap(monkeypatch, tmp_path, how: str) -> None:
    if how == "switch":
        monkeypatch.setenv(_confine.SANDBOX_ENV, "none")
    else:  # a PATH with the compiler and nothing else: no bwrap to find
        bin_ = tmp_path / "bin"
        bin_.mkdir()
        for tool in ("c++", "g++", "nm"):
            found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True)
            if found.stdout.strip():
                (bin_ / tool).symlink_to(found.stdout.strip())
        monkeypatch.setenv("PATH", str(bin_))
        monkeypatch.delenv(_confine.BWRAP_ENV, raising=False)
        monkeypatch.setenv(_confine.SANDBOX_ENV, "auto")
    assert not _works().works


@pytest.mark.parametrize("how", ["switch", "path"])
def test_without_a_sandbox_quiz_grade_runs_no_code_and_grades_the_rest(
    how, key, tmp_path, monkeypatch, capsys
):
    _no_bwrap(monkeypatch, tmp_path, how)

    def no_child(*_a, **_k):
        raise AssertionError("a learner's code reached a child without a sandbox")

    monkeypatch.setattr(coding_check, "run_child", no_child)
    subs = tmp_path / "subs"
    submit(subs, key, "alice", {"q1": "a", "code1": REFERENCE})
    submit(subs, key, "bob", {"q1": "b", "code1": REFERENCE})
    assert main(["quiz", "grade", str(key.path), str(subs), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "not running code answers" in err and "apt-get install bubblewrap" in err
    assert "user namespaces" in err and "--unconfined" in err
    rows = {(r["learner"], r["question"]): r for r in _rows(tmp_path / "out" / "long.csv")}
    assert float(rows["alice", "q1"]["score"]) == 1.0 and float(rows["bob", "q1"]["score"]) == 0.0
    for learner in ("alice", "bob"):
        code = rows[learner, "code1"]
        assert float(code["score"]) == 0.0 and "no working sandbox" in code["note"]
    flagged = (tmp_path / "out" / "flagged.csv").read_text()
    assert flagged.count("no sandbox works on this machine") == 2


@pytest.mark.usefixtures("cxx")
def test_unconfined_grading_is_the_instructors_loud_choice_in_every_report(
    key, tmp_path, monkeypatch, capsys
):
    _no_bwrap(monkeypatch, tmp_path, "switch")
    subs = tmp_path / "subs"
    submit(subs, key, "alice", {"q1": "a", "code1": REFERENCE})
    submit(subs, key, "bob", {"q1": "a"})  # no code answer: nothing of theirs ran
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(key.path), str(subs), "-o", str(out), "--unconfined"]) == 0
    err = capsys.readouterr().err
    assert UNCONFINED_NOTE in err and f"WARNING: {UNCONFINED_FLAG}" in err
    rows = {(r["learner"], r["question"]): r for r in _rows(out / "long.csv")}
    assert float(rows["alice", "code1"]["score"]) == 4.0  # it ran (unconfined, as asked)
    assert rows["alice", "code1"]["note"].startswith(f"passed (checked cpu): {UNCONFINED_NOTE}")
    flags = _rows(out / "flagged.csv")
    assert [f["learner"] for f in flags if UNCONFINED_FLAG in f["reason"]] == ["alice"]
    said = (out / "UNCONFINED.txt").read_text()
    assert UNCONFINED_FLAG in said and "alice" in said and "bob" not in said
    # Confined (or not run), no such file: it is there only when code ran unconfined.
    assert main(["quiz", "grade", str(key.path), str(subs), "-o", str(tmp_path / "o2")]) == 0
    assert not (tmp_path / "o2" / "UNCONFINED.txt").exists()


def test_the_library_refuses_too_not_only_the_command(key, tmp_path, monkeypatch):
    """grade_submissions' own runner asks for the sandbox: no silent fallback anywhere."""
    _no_bwrap(monkeypatch, tmp_path, "switch")
    subs = tmp_path / "subs"
    submit(subs, key, "alice", {"q1": "a", "code1": REFERENCE})
    report = grade_submissions(key, subs)
    (item,) = [i for i in report.results[0].items if i.question == "code1"]
    assert item.outcome == "not-run" and item.score == 0.0 and "bubblewrap" in item.note
    with pytest.raises(_confine.NoSandbox, match="apt-get install bubblewrap"):
        CodeRunner().sandbox()


def test_doctor_says_the_same(tmp_path, monkeypatch, capsys):
    _no_bwrap(monkeypatch, tmp_path, "switch")
    from course.cli.doctor import _learner_code

    _learner_code()
    out = capsys.readouterr().out
    assert "unless given --unconfined" in out and "apt-get install bubblewrap" in out
    assert "COURSE_BWRAP" in out


def test_course_bwrap_names_the_binary(tmp_path, monkeypatch):
    monkeypatch.setenv(_confine.BWRAP_ENV, str(tmp_path / "no-such-bwrap"))
    monkeypatch.setenv(_confine.SANDBOX_ENV, "auto")
    box = _works()
    assert not box.works and "COURSE_BWRAP" in box.detail
    real = subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True, text=True).stdout.strip()
    if real:
        monkeypatch.setenv("PATH", str(tmp_path))  # only COURSE_BWRAP can find it now
        monkeypatch.setenv(_confine.BWRAP_ENV, real)
        assert _confine.bwrap_path() == real


# ---------------------------------------------------------------------------
# 2. Through the grader, the filter's message: 0 with the line.
# ---------------------------------------------------------------------------
REACH_LIBC = {
    "extern-system": 'extern char system[];\n((int (*)(const char*))(void*)system)("id");\n' + REFERENCE,
    "extern-dlsym": "int v = 0;\nextern char dlsym[];\n" + REFERENCE,
    "extern-kill": "extern int kill(int, int);\nkill(-1, 9);\n" + REFERENCE,
    "lambda-calls-system": "auto f = [] { return 0; };\nf();\n" + REFERENCE,
    "local-class-calls-kill": "struct K { int go() { return 0; } };\n" + REFERENCE,
    "cr-hides-a-directive": "int v = 0; // x\r#include </etc/passwd>\n" + REFERENCE,
}


@pytest.mark.usefixtures("cxx")
def test_what_reaches_libc_without_a_header_scores_zero_with_its_line(bwrap, key, tmp_path):
    subs = tmp_path / "subs"
    for n, piece in enumerate(REACH_LIBC.values()):
        submit(subs, key, f"learner{n}", {"code1": piece})
    report = grade_submissions(key, subs, run_code=CodeRunner(use_gpu=False))
    assert len(report.results) == len(REACH_LIBC)
    for result in report.results:
        (item,) = result.items[1:]
        assert item.score == 0.0 and item.outcome == "refused", item.note
        assert "your code, line " in item.note


# ---------------------------------------------------------------------------
# 3. Confined: with the filter and the link check taken away, nothing reaches outside.
# ---------------------------------------------------------------------------
def _shell(command: str) -> str:
    """A piece that runs ``command`` through libc's system, reached by a block-scope extern."""
    quoted = command.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "extern char system[];\n"
        f'if (mn == 0 && k == 0) ((int (*)(const char*))(void*)system)("{quoted}");\n' + REFERENCE
    )


@pytest.fixture
def no_filter(monkeypatch):
    """Take the filter and the link check away: bubblewrap alone must hold."""
    monkeypatch.setattr(coding_check, "refuse_escape", lambda *_a, **_k: None)
    monkeypatch.setattr(coding_check, "_foreign_symbols", lambda *_a, **_k: [])


@pytest.mark.usefixtures("cxx", "no_filter")
def test_past_the_filter_a_piece_reaches_nothing_outside_its_sandbox(bwrap, key, tmp_path):
    subs = tmp_path / "subs"
    planted = subs / key.id / "mallory.json"
    loot = tmp_path / "loot.txt"
    grader = subprocess.Popen(["sleep", "600"], start_new_session=True)  # a process of the grader's
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    marker = "course-hostile-daemon-36"
    pieces = {
        "read-key-plant": _shell(f"cp {key.path} {planted}; cat {key.path} > {loot}"),
        "kill-grader": _shell(f"kill -STOP {grader.pid}; kill -9 {grader.pid}"),
        "connect": _shell(
            f"{sys.executable} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)'"
        ),
        "daemon": _shell(f"setsid sh -c 'sleep 600; :' {marker} & kill -9 $PPID"),
    }
    try:
        for name, piece in pieces.items():
            submit(subs, key, name, {"q1": "a", "code1": piece})
        report = grade_submissions(key, subs, run_code=CodeRunner(use_gpu=False))
        assert sorted(r.learner for r in report.results) == sorted(pieces)  # no planted learner
        assert not planted.exists() and not loot.exists()
        assert grader.poll() is None  # not killed
        with open(f"/proc/{grader.pid}/stat") as f:
            assert f.read().split(") ")[1][0] != "T"  # not stopped
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
        # The daemon died with its pid namespace (poll generously: the kernel tears it down).
        deadline = time.monotonic() + 60
        while _processes_named(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _processes_named(marker)
        # What ran, ran confined: the computing part still passed or was stopped, never outside.
        for result in report.results:
            assert result.items[0].score == 1.0
    finally:
        grader.kill()
        grader.wait()
        listener.close()
        for pid in _processes_named(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.usefixtures("cxx", "no_filter")
def test_the_same_piece_unconfined_does_plant_a_submission(key, tmp_path, monkeypatch):
    """The control: past the filter, without the sandbox (and only by --unconfined), the piece runs
    system() and plants a file; so what the confined test sees is the sandbox's doing."""
    monkeypatch.setenv(_confine.SANDBOX_ENV, "none")
    subs = tmp_path / "subs"
    planted = tmp_path / "planted.txt"
    submit(subs, key, "mallory", {"code1": _shell(f"echo planted > {planted}")})
    report = grade_submissions(key, subs, run_code=CodeRunner(use_gpu=False, unconfined=True))
    assert planted.read_text() == "planted\n"
    assert UNCONFINED_FLAG in report.results[0].flags


def _processes_named(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


# ---------------------------------------------------------------------------
# 4. Without a pid namespace: the grader, as subreaper, kills what escaped a killed keeper.
# ---------------------------------------------------------------------------
def test_a_daemon_that_killed_its_keeper_does_not_outlive_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv(_confine.SANDBOX_ENV, "none")
    marker = f"course-orphan-36-{os.getpid()}"
    assert _confine.become_reaper()
    program = ["sh", "-c", f"setsid sh -c 'sleep 600; :' {marker} & sleep 1; kill -9 $PPID; sleep 600"]
    try:
        with _confine.child_folder() as folder:
            done = _confine.run_child(program, folder=folder, timeout_s=120, limits=_confine.Limits(cpu_s=60))
        assert done.returncode == -signal.SIGKILL  # the keeper, killed by the program
        assert not _processes_named(marker)  # swept before run_child returned: no luck involved
    finally:
        for pid in _processes_named(marker):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------
# 5. #include through the GPU-less NVRTC check: refused; and past that, nothing to read.
# ---------------------------------------------------------------------------
def _nvrtc_or_skip():
    try:
        from course.kernel.compile import cccl_include

        cccl_include()
    except Exception as e:  # noqa: BLE001 - no CuPy or NVRTC here: the reason
        pytest.skip(f"the GPU-less NVRTC check cannot run here: {e}")


@pytest.mark.parametrize("target", ["/dev/stdin", "FILE"])
def test_an_include_is_refused_before_nvrtc_compiles(target, tmp_path, monkeypatch):
    from course.lessons import get_lesson
    from course.tryout import sandbox

    def no_child(*_a, **_k):
        raise AssertionError("NVRTC was started for a source with a foreign #include")

    monkeypatch.setattr(sandbox, "_supervise", no_child)
    lesson = get_lesson("day78")
    secret = tmp_path / "secret.txt"
    secret.write_text("the answer key\n")
    name = str(secret) if target == "FILE" else target
    for spelling in (f'#include "{name}"', f"%:include <{name}>", f'# /* */ include \\\r\n"{name}"'):
        path = tmp_path / "src" / lesson.kernel_file
        path.parent.mkdir(exist_ok=True)
        path.write_text(lesson.kernel_path.read_text() + f"\n{spelling}\n")
        result = sandbox.run_variant(lesson, path)
        assert (
            result.outcome == "compile-error"
            and "not one of the lesson kernel's own includes" in result.headline
        )


def test_past_the_include_check_the_nvrtc_child_cannot_see_the_file(bwrap, tmp_path, monkeypatch):
    _nvrtc_or_skip()
    from course.lessons import get_lesson
    from course.tryout import sandbox

    monkeypatch.setattr(sandbox, "refused_include", lambda *_a, **_k: None)
    lesson = get_lesson("day78")
    secret = tmp_path / "secret" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET-36-KEY\n")
    path = tmp_path / "src" / lesson.kernel_file
    path.parent.mkdir()
    path.write_text(f'#include "{secret}"\n' + lesson.kernel_path.read_text())
    result = sandbox.run_variant(lesson, path, compile_timeout_s=300)
    assert result.outcome == "compile-error"
    assert "SECRET-36-KEY" not in f"{result.headline}\n{result.detail}\n{result.meaning}"


# ---------------------------------------------------------------------------
# 6. The defects found beside: pages DEST and the progress lock.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["fifo-page", "fifo-manifest", "dev-zero-page"])
def test_course_pages_reads_only_regular_files_bounded(what, tmp_path, capsys):
    from course.cli.pages import MANIFEST, copy_pages
    from course.errors import CourseError

    source = tmp_path / "pages"
    source.mkdir()
    (source / "a.ipynb").write_text("{}")
    dest = tmp_path / "dest"
    dest.mkdir()
    if what == "fifo-page":
        os.mkfifo(dest / "a.ipynb")
        done = copy_pages(dest, source)  # returns at once: the FIFO is not waited on
        assert done.not_files and "a.ipynb" in done.not_files[0] and "FIFO" in done.not_files[0]
    elif what == "dev-zero-page":
        (dest / "a.ipynb").symlink_to("/dev/zero")
        done = copy_pages(dest, source)
        assert done.not_files and "a.ipynb" in done.not_files[0]
    else:
        os.mkfifo(dest / MANIFEST)
        with pytest.raises(CourseError, match="not a regular file"):
            copy_pages(dest, source)


def test_a_symlinked_progress_lock_is_refused_with_a_message(tmp_path, monkeypatch):
    from course.exercises import progress
    from course.tryout.workspace import WORKSPACE_ENV

    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    outside = tmp_path / "outside.txt"
    data = tmp_path / "work" / "progress.json"
    data.parent.mkdir(parents=True)
    lock = data.with_name(data.name + ".lock")
    lock.symlink_to(outside)
    with pytest.raises(progress.ProgressError, match="symbolic link"), progress._locked(data):
        pass
    assert not outside.exists()


# ---------------------------------------------------------------------------
# 7. The GPU child in bubblewrap (the H100 run: COURSE_REQUIRE_GPU=1 COURSE_REQUIRE_BWRAP=1, and
#    COURSE_BWRAP=/path/to/bwrap where the machine has none of its own).
# ---------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("one_off", [False, True])
def test_on_the_gpu_every_child_is_confined_and_hostile_pieces_score_zero(
    one_off, bwrap, day78_gpu, key, tmp_path, monkeypatch
):
    started: list[tuple[str, bool]] = []
    real_start = _confine._start

    def recording_start(command, folder, limits, confine, binds, *rest, **kw):
        proc, confined = real_start(command, folder, limits, confine, binds, *rest, **kw)
        started.append((binds, confined))
        return proc, confined

    monkeypatch.setattr(_confine, "_start", recording_start)
    secret = tmp_path / "secret" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET-36-GPU\n")
    pieces = {
        "right": REFERENCE,
        "extern-system": REACH_LIBC["extern-system"],
        "lambda": REACH_LIBC["lambda-calls-system"],
        "cr-include": f'int v = 0; // x\r#include "{secret}"\n' + REFERENCE,
        "crlf-include-stdin": 'int v = 0; // x\r\n#include "/dev/stdin"\n' + REFERENCE,
    }
    subs = tmp_path / "subs"
    for name, piece in pieces.items():
        submit(subs, key, name, {"q1": "a", "code1": piece})
    with CodeRunner(use_gpu=True, timeout_s=60.0, workers=not one_off) as runner:
        report = grade_submissions(key, subs, run_code=runner)
    scores = {r.learner: r.items[1] for r in report.results}
    assert scores["right"].score == 4.0 and scores["right"].outcome == "passed", scores["right"].note
    for name in pieces.keys() - {"right"}:
        assert scores[name].score == 0.0 and "your code, line " in scores[name].note, (
            name,
            scores[name].note,
        )
    assert all("SECRET-36-GPU" not in item.note for item in scores.values())
    gpu_children = [confined for binds, confined in started if binds == "gpu"]
    assert gpu_children and all(gpu_children), started  # the GPU child ran, each time in bubblewrap
    assert all(confined for _, confined in started), started  # and so did every other child


@pytest.mark.gpu
def test_on_the_gpu_an_include_past_every_check_cannot_read_the_file(bwrap, day78_gpu, tmp_path, monkeypatch):
    """With the include check taken away, NVRTC in the confined GPU child cannot open a file outside."""
    from course.lessons import get_lesson
    from course.tryout import sandbox

    monkeypatch.setattr(sandbox, "refused_include", lambda *_a, **_k: None)
    lesson = get_lesson("day78")
    secret = tmp_path / "secret" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET-36-NVRTC\n")
    path = tmp_path / "src" / lesson.kernel_file
    path.parent.mkdir()
    path.write_text(f'#include "{secret}"\n' + lesson.kernel_path.read_text())
    result = sandbox.run_variant(lesson, path, 60.0, compile_timeout_s=300)
    assert result.outcome == "compile-error", str(result)
    assert "SECRET-36-NVRTC" not in f"{result.headline}\n{result.detail}\n{result.meaning}"
