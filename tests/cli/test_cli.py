"""The command line on this machine: clear messages and exit codes, no traceback."""

import subprocess
import sys

import pytest
from recordings import NOT_RECORDED

from course.cli import main
from course.kernel import gate
from course.lessons import LESSONS, get_lesson


def _python_m(*args, env_extra=None):
    import os

    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "course", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_doctor_prints_versions_and_lessons():
    r = _python_m("doctor")
    assert r.returncode == 0, r.stderr
    for word in ("GPU:", "cupy:", "cuda-bindings:", "nvrtc:", "driver (CUDA):", *LESSONS):
        assert word in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_doctor_compile_checks_every_kernel():
    r = _python_m("doctor", "--compile")
    assert r.returncode == 0, r.stdout + r.stderr
    for lesson in LESSONS.values():
        assert f"{lesson.kernel_file} compiled for {lesson.arch} without a GPU" in r.stdout


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_run_without_the_hardware_exits_2_and_says_why(lesson_id, capsys):
    # Through main in this process, what `python -m course run` calls (a fresh process:
    # test_course_error_becomes_a_message_not_a_traceback and test_registry.py).
    if gate.verdict(get_lesson(lesson_id)).runs:
        pytest.skip(f"this machine can run {lesson_id}")
    code = main(["run", lesson_id])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"Cannot run {lesson_id} here." in out
    if lesson_id in NOT_RECORDED:
        assert f"Not recorded yet: no run of {lesson_id} on a real GPU is in this checkout." in out
    else:
        assert "Recorded on a real GPU (not run here)" in out  # the evidence follows
    assert "Traceback" not in out + err


@pytest.mark.skipif(gate.verdict(get_lesson("day76")).runs, reason="this machine can run day76")
def test_record_without_a_gpu_writes_nothing(tmp_path):
    r = _python_m("record", "--out", str(tmp_path))
    assert r.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_unknown_lesson_is_refused_by_argparse(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "day99"])
    assert info.value.code == 2
    assert "invalid choice: 'day99'" in capsys.readouterr().err


def test_course_error_becomes_a_message_not_a_traceback(tmp_path):
    # A checkout without its material: the doctor still reports, and says so.
    r = _python_m("doctor", "--compile", env_extra={"COURSE_ROOT": str(tmp_path)})
    assert r.returncode == 1 and "no kernels/ folder" in r.stdout
    r = _python_m("record", "--out", str(tmp_path), env_extra={"COURSE_ROOT": str(tmp_path)})
    assert "Traceback" not in r.stdout + r.stderr
    if not gate.verdict(get_lesson("day76")).runs:
        r = _python_m("run", "day76", env_extra={"COURSE_ROOT": str(tmp_path)})
        assert r.returncode == 2
        assert r.stderr.startswith("error: ") and "no kernels/ folder" in r.stderr
        assert "Traceback" not in r.stderr


def test_a_sticky_fault_exits_1_once_without_unload_tracebacks(monkeypatch, capsys):
    # A LaunchError whose kernel faulted: the CLI says it once and leaves with os._exit(1),
    # before CuPy's module unload can print tracebacks over the message.
    import course.cli as cli
    from course.errors import CourseError

    class Faulted(CourseError):
        sticky = True

    exits = []
    monkeypatch.setattr(cli.os, "_exit", lambda code: exits.append(code))
    monkeypatch.setattr(cli, "build_parser", lambda: _parser_raising(Faulted("the kernel faulted")))
    cli.main([])
    assert exits == [1]
    assert capsys.readouterr().err.count("the kernel faulted") == 1


def _parser_raising(error):
    import argparse

    parser = argparse.ArgumentParser()

    def fail(_args):
        raise error

    parser.set_defaults(func=fail)
    return parser


def test_a_reader_that_goes_away_is_not_a_traceback(monkeypatch, tmp_path):
    # Like `python -m course bench --recorded --json | head`: the pipe closes while printing.
    import sys

    import course.cli as cli

    target = (tmp_path / "out").open("w")

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            return target.fileno()

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert cli.main(["bench", "--recorded", "--json"]) == 141
    target.close()


# --- conventions: --version, prog, plain helps that state the exit status ----------------------------
def _helps():
    """Every parser's --help text: the top level, each subcommand, and the subcommands under them."""
    import argparse

    from course.cli import build_parser

    out = {}

    def walk(parser, name):
        out[name] = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child_name, child in action.choices.items():
                    walk(child, f"{name} {child_name}")

    walk(build_parser("python -m course"), "python -m course")
    return out


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    r = _python_m("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"python -m course {version('hopper-course')}"


def test_prog_follows_how_the_command_was_started():
    from pathlib import Path

    from course._toml import read_toml
    from course.cli import prog_name

    scripts = read_toml(Path(__file__).parents[2] / "pyproject.toml", "pyproject.toml")[1]["project"][
        "scripts"
    ]
    assert scripts == {"hopper-course": "course.cli:main"}
    assert prog_name("/home/me/.venv/bin/hopper-course") == "hopper-course"
    assert prog_name("/x/course/__main__.py") == "python -m course"
    r = _python_m("run", "--help")
    assert r.stdout.startswith("usage: python -m course run")


def test_the_console_script_names_itself(tmp_path):
    # The script pip writes for [project.scripts]: argv[0] is its own path.
    script = tmp_path / "hopper-course"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom course.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    r = subprocess.run([str(script), "timeline", "--help"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("usage: hopper-course timeline"), r.stdout + r.stderr


def test_every_help_is_plain_text_and_every_subcommand_states_its_exit_status():
    helps = _helps()
    assert {"python -m course timeline", "python -m course pages", "python -m course quiz grade"} <= set(
        helps
    )
    for name, text in helps.items():
        assert "``" not in text and ":func:" not in text, f"{name} --help shows reST markup"
        if name != "python -m course":
            assert text.count("Exit status") == 1, f"{name} --help must state its exit status once"
            assert "0" in text.split("Exit status", 1)[1]


def test_progress_help_states_the_learner_ids_real_order():
    text = _helps()["python -m course progress"]
    flat = " ".join(text.split())
    assert "$COURSE_LEARNER, else $JUPYTERHUB_USER, else your login name, else 'default'" in flat
    from pathlib import Path

    page = " ".join((Path(__file__).parents[2] / "book" / "learners" / "progress.md").read_text().split())
    assert "`COURSE_LEARNER`, else `JUPYTERHUB_USER`, else the login name, else `default`" in page
