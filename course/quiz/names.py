"""The table from a hub's user names to the gradebook's logins (``--names map.csv``).

A CSV file with the header ``hub_user,login`` and one row per learner whose
JupyterHub name is not already their gradebook login (a learner with no row
keeps their hub name). Blank lines and lines starting with ``#`` are
skipped. Every hub user and every login appears at most once: two learners
mapped to one login would put one learner's score on the other's row, so
that is refused, with the file and line. Where the table comes from and how
it looks for an LMS: content/quizzes/README.md.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .._files import read_regular
from ..errors import CourseError

__all__ = ["HEADER", "read_names"]

HEADER = ("hub_user", "login")


def read_names(path: Path | str) -> dict[str, str]:
    """``{hub user: login}`` from the table at ``path``; CourseError naming the line on a bad row."""
    path = Path(path)
    try:
        text = read_regular(path, "the names table").decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CourseError(f"the names table must be UTF-8 text ({e.reason})", path=path) from None
    rows = [
        (number, row)
        for number, row in enumerate(csv.reader(text.splitlines()), start=1)
        if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")
    ]
    if not rows or tuple(cell.strip() for cell in rows[0][1]) != HEADER:
        raise CourseError(
            f"the names table must start with the header {','.join(HEADER)} "
            f"(got {','.join(rows[0][1]) if rows else 'nothing'!r:.80})",
            path=path,
            line=rows[0][0] if rows else None,
        )
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    first: dict[str, int] = {}
    for number, row in rows[1:]:
        if len(row) != 2 or not all(cell.strip() for cell in row):
            raise CourseError(
                f"a row holds a hub user and a login, both non-empty (got {row!r:.80})",
                path=path,
                line=number,
            )
        user, login = (cell.strip() for cell in row)
        if user in first:
            raise CourseError(
                f"hub user {user!r} has two rows (lines {first[user]} and {number}): keep one",
                path=path,
                line=number,
            )
        if login in seen:
            raise CourseError(
                f"login {login!r} is given to two hub users (lines {seen[login]} and {number}): "
                "each learner has a login of their own",
                path=path,
                line=number,
            )
        first[user], seen[login] = number, number
        names[user] = login
    return names
