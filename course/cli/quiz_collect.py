"""``python -m course quiz collect``: every learner's submission from a JupyterHub (``course.quiz.collect``).

    python -m course quiz collect QUIZ_ID --hub-url https://hub.example.edu -o collected/
        [--token-file FILE] [--path TEMPLATE] [--names MAP.csv]

The token is ``JUPYTERHUB_API_TOKEN``, or the first line of ``--token-file``
(never a command-line argument, which other users of the machine can read
in the process list). One line per hub user, then a summary per quiz.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .._files import read_regular, shown
from ..errors import CourseError
from ..quiz.collect import DEFAULT_PATH, SCOPES, collect_quiz, report_lines
from ..quiz.names import read_names

TOKEN_ENV = "JUPYTERHUB_API_TOKEN"


def register_collect(sub: argparse._SubParsersAction) -> None:
    collect = sub.add_parser(
        "collect",
        help="take every learner's submission from a JupyterHub, named by the hub's user",
        description="Save each JupyterHub user's submission of each quiz as OUT/<quiz>/<user>.json, "
        "read from their server through the hub with an admin-scoped token "
        f"(scopes {', '.join(SCOPES)}).",
    )
    collect.add_argument(
        "quizzes",
        nargs="+",
        metavar="QUIZ_ID",
        help="the quiz ids (the lessons' ids, as the quiz files are named)",
    )
    collect.add_argument(
        "--hub-url", required=True, metavar="URL", help="the hub's public URL, the one learners open"
    )
    collect.add_argument("-o", "--output", type=Path, required=True, metavar="COLLECTED_DIR")
    collect.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help=f"a file holding the token (default: the {TOKEN_ENV} environment variable)",
    )
    collect.add_argument(
        "--path",
        default=DEFAULT_PATH,
        metavar="TEMPLATE",
        help="where Submit wrote, from each server's root ({quiz} and {user} are filled in; "
        f"default: {DEFAULT_PATH})",
    )
    collect.add_argument(
        "--names",
        type=Path,
        metavar="MAP.csv",
        help="the hub_user,login table given to `quiz grade --names`: collect lists the users it lacks",
    )
    collect.set_defaults(func=_collect)


def _token(args: argparse.Namespace) -> str:
    if args.token_file is not None:
        lines = read_regular(args.token_file, "the token file", limit=4096).decode("utf-8", "replace")
        token = lines.strip().splitlines()[0].strip() if lines.strip() else ""
        if not token:
            raise CourseError("the token file is empty", path=args.token_file)
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise CourseError(
            f"collect needs a hub token with the scopes {', '.join(SCOPES)}: set {TOKEN_ENV} "
            "or give --token-file (content/quizzes/README.md says how to make one)"
        )
    return token


def _collect(args: argparse.Namespace) -> int:
    token = _token(args)
    names = read_names(args.names) if args.names is not None else None
    complete = True
    for quiz in args.quizzes:
        report = collect_quiz(args.hub_url, token, quiz, args.output, remote=args.path)
        for line in report_lines(report):
            print(line)
        print(f"collected {report.summary()}; into {shown(args.output / quiz)}")
        unreached = [c for c in report.items if not c.reached]
        if unreached:
            complete = False
            print(
                f"{len(unreached)} users' servers could not be read for quiz {quiz!r} (lines above): "
                "their files, if any, are still in their homes; collect again when fixed",
                file=sys.stderr,
            )
        if names is not None:
            lacking = [c.user for c in report.items if c.path is not None and c.user not in names]
            if lacking:
                print(
                    f"not in {shown(args.names)} (matched by their hub name when grading): "
                    + ", ".join(shown(u) for u in lacking),
                    file=sys.stderr,
                )
    return 0 if complete else 1
