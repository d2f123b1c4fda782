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
import sys
from collections.abc import Sequence

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
    "contents",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course",
        description="Hopper at the metal: TMA and wgmma lessons, quizzes and grading.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
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
