"""The registry is complete: a lesson is its files, and nothing else names it.

The proof: a throwaway lesson, built from an existing one under a new id in
a temporary copy of the course (its package, kernel, notebook, quiz and
annotations; no other file touched), is picked up by ``doctor``, ``run``,
``record``, ``bench``, the page, quiz validation and nbval. And the shared
machinery names no lesson: lesson ids appear only inside the lessons' own
packages.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.bench.spec import bench_spec
from course.kernel import gate
from course.kernel.host import host_of
from course.lessons import LESSONS

ROOT = Path(__file__).resolve().parents[1]
_LESSON_ID = re.compile(r"\bday\d+\b")


def test_no_shared_module_names_a_lesson():
    named = []
    for path in sorted((ROOT / "course").rglob("*.py")):
        rel = path.relative_to(ROOT / "course")
        if rel.parts[0] == "lessons" and len(rel.parts) > 2:
            continue  # a lesson's own package may name itself
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _LESSON_ID.search(line):
                named.append(f"course/{rel}:{n}: {line.strip()}")
    assert not named, "shared modules must not name lessons:\n" + "\n".join(named)


def test_every_lesson_has_its_files():
    for lesson in LESSONS.values():
        assert lesson.kernel_path.is_file()
        assert lesson.notebook_path.is_file()
        assert lesson.quiz_path.is_file()
        assert lesson.annotations_path.is_file()
        assert host_of(lesson).lesson.id == lesson.id
        assert lesson.package == f"course.lessons.{lesson.id}"


def _clone(source_id: str, new_id: str, root: Path) -> None:
    """Copy the course to ``root`` and add lesson ``new_id`` made from ``source_id``."""
    for name in ("course", "kernels", "content", "notebooks", "evidence", "pyproject.toml"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, root / name)
    lesson = LESSONS[source_id]
    day = int(new_id.removeprefix("day"))
    old_day = f"Day {lesson.day}"

    def rename(text: str) -> str:
        return text.replace(source_id, new_id).replace(old_day, f"Day {day}")

    kernel = f"{new_id}_{lesson.kernel_file}"
    package = root / "course" / "lessons" / new_id
    shutil.copytree(
        root / "course" / "lessons" / source_id, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    init = package / "__init__.py"
    text = rename(init.read_text()).replace(f"day={lesson.day}", f"day={day}")
    text = text.replace(f'kernel_file="{lesson.kernel_file}"', f'kernel_file="{kernel}"')
    text = text.replace(f'notebook="{lesson.notebook}"', f'notebook="{new_id}.ipynb"')
    init.write_text(text)
    shutil.copy(lesson.kernel_path, root / "kernels" / kernel)
    (root / "notebooks" / f"{new_id}.ipynb").write_text(rename(lesson.notebook_path.read_text()))
    for src in sorted((ROOT / "content").glob(f"*/{source_id}.toml")):  # every kind of content the lesson has
        (root / "content" / src.parent.name / f"{new_id}.toml").write_text(rename(src.read_text()))
    bench = ROOT / "evidence" / "bench" / f"{source_id}.json"
    if bench.exists():
        (root / "evidence" / "bench" / f"{new_id}.json").write_text(rename(bench.read_text()))


# Runs each command given as JSON in argv[1] through course.cli.main, as `python -m course`
# does, and writes what each printed and returned to the file argv[2].
_DRIVER = """
import contextlib, io, json, sys
from course.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    results.append({"argv": argv, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f)
"""


@pytest.mark.slow
def test_a_new_lesson_is_picked_up_everywhere_without_editing_shared_files(tmp_path):
    source_id = next(iter(LESSONS))
    new_id = "day99"
    root = tmp_path / "course-copy"
    root.mkdir()
    _clone(source_id, new_id, root)
    env = dict(os.environ, PYTHONPATH=str(root), COURSE_ROOT=str(root))
    env.pop(gate.REQUIRE_GPU_ENV, None)
    runs_here = gate.verdict(LESSONS[source_id]).runs
    commands = [
        ["doctor", "--compile"],
        ["run", new_id],
        ["quiz", "validate", str(root / "content" / "quizzes" / f"{new_id}.toml")],
    ]
    if not runs_here:
        commands.append(["record", new_id, "--out", str(tmp_path / "ev")])
        if bench_spec(LESSONS[source_id]) is not None:
            commands += [["bench", new_id, "--out", str(tmp_path / "bench")], ["bench", "--recorded"]]
    # One fresh interpreter on the copy runs every command through `python -m course`'s main,
    # one after another (not one interpreter each: the same code, a fraction of the start-up).
    results = tmp_path / "results.json"
    driver = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(commands), str(results)],
        capture_output=True, text=True, env=env, cwd=root, timeout=600,
    )  # fmt: skip
    assert driver.returncode == 0, driver.stdout[-3000:] + driver.stderr[-3000:]
    ran = {" ".join(r["argv"][:2]): r for r in json.loads(results.read_text())}
    assert len(ran) == len(commands)
    for r in ran.values():
        assert "Traceback" not in r["stdout"] + r["stderr"], r

    doctor = ran["doctor --compile"]
    assert doctor["code"] == 0, doctor
    assert (
        f"{new_id} (" in doctor["stdout"]
        and f"{new_id}_{LESSONS[source_id].kernel_file} compiled" in doctor["stdout"]
    )

    run = ran[f"run {new_id}"]
    assert run["code"] == (0 if runs_here else 2), run
    if not runs_here:
        assert f"Cannot run {new_id} here." in run["stdout"]
        record = ran[f"record {new_id}"]
        assert record["code"] == 2 and f"{new_id}: not recorded" in record["stdout"], record
        if bench_spec(LESSONS[source_id]) is not None:
            timed = ran[f"bench {new_id}"]
            assert timed["code"] == 2 and f"{new_id}: not timed" in timed["stdout"], timed
            listed = ran["bench --recorded"]
            assert listed["code"] == 0 and new_id in listed["stdout"], listed

    quiz = ran["quiz validate"]
    assert quiz["code"] == 0, quiz
    assert f"quiz '{new_id}'" in quiz["stdout"]

    nbval = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
         "-o", "addopts=", str(root / "notebooks" / f"{new_id}.ipynb")],
        capture_output=True, text=True, env=env, cwd=root, timeout=600,
    )  # fmt: skip
    assert nbval.returncode == 0, nbval.stdout[-3000:] + nbval.stderr[-2000:]
    assert re.search(r"\d+ passed", nbval.stdout)
