"""``python -m course``: one subcommand per module in this package.

Each subcommand module defines ``register(subparsers)``, which adds its
parser and sets ``func`` to a callable taking the parsed arguments and
returning an exit code. A ``CourseError`` (bad input, an environment
problem) is printed as one clear message, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed
from types import ModuleType

from .._files import shown
from ..errors import CourseError

# The subcommands, in the order ``--help`` lists them.
SUBCOMMANDS = (
    "doctor",
    "run",
    "try_",
    "record",
    "quiz",
    "coding",
    "progress",
    "bench",
    "timeline",
    "pages",
    "contents",
)

SCRIPT = "hopper-course"  # pyproject.toml's [project.scripts] name
MODULE = "python -m course"


def prog_name(argv0: str | None = None) -> str:
    """How the command was started: ``hopper-course`` (the console script) or ``python -m course``."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return SCRIPT if name in (SCRIPT, f"{SCRIPT}.exe") else MODULE


def version() -> str:

    try:
        return installed(SCRIPT)
    except PackageNotFoundError:
        return "(not installed: run from a checkout)"


_LITERAL = re.compile(r"``([^`]+)``|:\w+:`([^`]+)`")


def plain(text: str | None) -> str | None:
    """Docstring text as a terminal shows it: no reST markup (``x`` and :role:`x` become x)."""
    return None if text is None else _LITERAL.sub(lambda m: m.group(1) or m.group(2), text)


def exit_status(module: ModuleType) -> str:
    """The "Exit status" paragraph of a subcommand module's docstring, as plain text."""
    for paragraph in (module.__doc__ or "").split("\n\n"):
        if paragraph.lstrip().startswith("Exit status"):
            return textwrap.fill(plain(" ".join(paragraph.split())) or "", 79)
    raise AssertionError(f"{module.__name__}: its docstring must state the exit status")


def _finish(parser: argparse.ArgumentParser, status: str) -> None:
    """Plain help text and the exit status, for a subcommand and the subcommands under it."""
    if parser.description:  # the exit status goes last, once
        kept = [p for p in parser.description.split("\n\n") if not p.lstrip().startswith("Exit status")]
        parser.description = plain("\n\n".join(kept).rstrip())
    parser.epilog = status
    for action in parser._actions:
        action.help = plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                _finish(child, status)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or prog_name(),
        description="Hopper at the metal: TMA and wgmma lessons, quizzes and grading.",
        epilog="Each command's --help states its exit status. A problem with the input or this machine is "
        "one message (error: ...), never a traceback.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"{__name__}.{name}")
        before = set(sub.choices)
        module.register(sub)
        for added in set(sub.choices) - before:
            _finish(sub.choices[added], exit_status(module))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CourseError as e:
        print(f"error: {e}", file=sys.stderr)
        if getattr(e, "sticky", False):
            # A kernel faulted: this process's CUDA context is unusable, and CuPy's
            # module unload at exit would print tracebacks over the message above.
            # The result is a wrong run (exit 1), said once.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as Unix tools do (Python docs, signal: SIGPIPE).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as e:
        # An environment problem no check above foresaw (a disk that filled up, a folder made
        # read-only): what failed and where, in one line, not a traceback.
        where = f"{shown(e.filename)}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
