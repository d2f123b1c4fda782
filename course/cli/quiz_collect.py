"""``python -m course quiz collect``: every learner's submission from a JupyterHub (``course.quiz.collect``).

    python -m course quiz collect QUIZ_ID --hub-url https://hub.example.edu -o collected/
        [--token-file FILE] [--users A,B | --group learners] [--exclude C,D]
        [--from-servers [--path TEMPLATE]] [--service URL] [--deadline SECONDS] [--names MAP.csv]

The token is ``JUPYTERHUB_API_TOKEN``, or the first line of ``--token-file``
(never a command-line argument, which other users of the machine can read
in the process list). One line per learner, then a summary per quiz.

Exit status: 0 when every learner's submission was saved; 3 when every
source answered but some learners' work is missing (not submitted: the
lines say who); 1 when some file could not be read (its work may exist:
collect again once fixed); 2 for input that cannot be used.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .._files import read_regular, shown
from ..errors import CourseError
from ..quiz.collect import (
    DEADLINE_S,
    DEFAULT_PATH,
    MISSING,
    SERVER_SCOPES,
    SERVICE,
    SERVICE_SCOPES,
    collect_quiz,
    report_line,
)
from ..quiz.names import read_names

TOKEN_ENV = "JUPYTERHUB_API_TOKEN"
MISSING_STATUS = 3  # every source answered, and some learner's work is not there


def register_collect(sub: argparse._SubParsersAction) -> None:
    collect = sub.add_parser(
        "collect",
        help="take every learner's submission from a JupyterHub, named by the hub's user",
        description="Save each learner's submission of each quiz as OUT/<quiz>/<user>.json (0600, "
        f"folders 0700), from the hub's submissions service {SERVICE!r} (token scopes "
        f"{', '.join(SERVICE_SCOPES)}), or with --from-servers from each learner's server through a "
        f"token of that learner's own (your token's scopes {', '.join(SERVER_SCOPES)}). Exit 0: all "
        f"saved; {MISSING_STATUS}: some learners' work is missing; 1: some could not be read.",
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
    who = collect.add_mutually_exclusive_group()
    who.add_argument(
        "--users", type=_names, metavar="A,B,...", help="these hub users only (default: every hub user)"
    )
    who.add_argument(
        "--group", metavar="GROUP", help="the members of this hub group (the token needs read:groups)"
    )
    collect.add_argument(
        "--exclude",
        type=_names,
        default=[],
        action="extend",
        metavar="A,B,...",
        help="leave these users out (staff, test accounts); may be given again",
    )
    collect.add_argument(
        "--from-servers",
        action="store_true",
        help="read each learner's server instead of the submissions service (a hub without it); "
        "only running servers can be read",
    )
    collect.add_argument(
        "--service",
        metavar="URL",
        help=f"the submissions service's URL (default: HUB/services/{SERVICE}/)",
    )
    collect.add_argument(
        "--deadline",
        type=float,
        default=DEADLINE_S,
        metavar="SECONDS",
        help=f"the most one learner's file may take (default: {DEADLINE_S:g})",
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


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no user names in {text!r} (give them separated by commas)")
    return names


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
            f"collect needs a hub token with the scopes {', '.join(SERVICE_SCOPES)}: set {TOKEN_ENV} "
            "or give --token-file (content/quizzes/README.md says how to make one)"
        )
    return token


def _collect(args: argparse.Namespace) -> int:
    token = _token(args)
    names = read_names(args.names) if args.names is not None else None
    unread = missing = 0
    for quiz in args.quizzes:
        report = collect_quiz(
            args.hub_url,
            token,
            quiz,
            args.output,
            remote=args.path,
            from_servers=args.from_servers,
            service=args.service,
            users=args.users,
            group=args.group,
            exclude=args.exclude,
            deadline_s=args.deadline,
            told=lambda c: print(report_line(c), flush=True),  # each learner as it is done
        )
        print(f"collected {report.summary()}; into {shown(args.output / quiz)}")
        unreached = [c for c in report.items if not c.reached]
        absent = [c for c in report.items if c.outcome in MISSING]
        unread += len(unreached)
        missing += len(absent)
        if unreached:
            print(
                f"{len(unreached)} learners' files could not be read for quiz {quiz!r} (lines above): "
                "their work, if any, is where it was; collect again when fixed",
                file=sys.stderr,
            )
        if absent:
            print(
                f"{len(absent)} learners have not submitted quiz {quiz!r}: "
                + ", ".join(shown(c.user) for c in absent[:20])
                + (f" and {len(absent) - 20} more" if len(absent) > 20 else ""),
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
    return 1 if unread else MISSING_STATUS if missing else 0
