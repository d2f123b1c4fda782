"""Fill one assignment column of a Canvas gradebook export from a grading run (``course.quiz.grade``).

Everything else in the gradebook is kept as it was; rows are matched by the
learner id column (``SIS Login ID`` by default); two rows sharing an id are
named and left alone.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .._files import read_regular
from ..errors import CourseError
from ._io import csv_bytes, write_atomic
from .grade import GradeReport
from .model import fmt_points

__all__ = ["CanvasExport", "export_canvas", "fill_gradebook", "rows_text"]


@dataclass(frozen=True)
class CanvasExport:
    path: Path
    filled: int  # learner rows given a score
    not_in_gradebook: tuple[str, ...]  # graded learners with no gradebook row
    without_submission: int  # gradebook student rows left as they were
    # Learner ids that two or more gradebook rows share, with those rows
    # (numbered as a spreadsheet shows them, the header being row 1). None
    # of those rows is filled: which one is the learner is the instructor's call.
    duplicates: tuple[tuple[str, tuple[int, ...]], ...] = ()


def rows_text(rows: tuple[int, ...]) -> str:
    """(3, 5, 7) -> 'rows 3, 5 and 7'."""
    numbers = [str(n) for n in rows]
    return "rows " + (", ".join(numbers[:-1]) + " and " + numbers[-1] if len(numbers) > 1 else numbers[0])


def export_canvas(
    report: GradeReport,
    gradebook: Path | str,
    column: str,
    out: Path | str,
    *,
    match_column: str = "SIS Login ID",
) -> CanvasExport:
    """Copy a Canvas gradebook export with ``column`` filled from ``report`` to ``out`` (``fill_gradebook``)."""
    export, data = fill_gradebook(report, gradebook, column, out, match_column=match_column)
    write_atomic(export.path, data)
    return export


def fill_gradebook(
    report: GradeReport,
    gradebook: Path | str,
    column: str,
    out: Path | str,
    *,
    match_column: str = "SIS Login ID",
    names: Mapping[str, str] | None = None,
) -> tuple[CanvasExport, bytes]:
    """The filled gradebook's bytes (for ``out``), not yet written: the grader writes them with its reports.

    Learners are matched on ``match_column`` (the learner id the quiz used).
    The "Points Possible" row gets the quiz's maximum; rows with no graded
    submission keep their cell as it was; every other column is untouched.
    Two or more rows with one learner id are all left as they were and
    listed in ``duplicates``. ``names`` maps a learner id (a JupyterHub user
    name) to its gradebook login (``names.read_names``); an id without an
    entry is its own login.
    """
    gradebook, out = Path(gradebook), Path(out)
    try:
        text = read_regular(gradebook, "the Canvas gradebook").decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CourseError(f"the Canvas gradebook must be UTF-8 text ({e.reason})", path=gradebook) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise CourseError("the Canvas gradebook is empty", path=gradebook)
    header = rows[0]
    for name in (column, match_column):
        if name not in header:
            raise CourseError(
                f"the gradebook has no column {name!r}; its columns are: {', '.join(header)}. "
                "Create the assignment in Canvas and export the gradebook again, or fix the column name",
                path=gradebook,
                line=1,
            )
    col, key = header.index(column), header.index(match_column)
    names = names or {}
    scores = {names.get(r.learner, r.learner): r.total for r in report.results}
    body = [row + [""] * (len(header) - len(row)) for row in rows[1:]]
    where: dict[str, list[int]] = {}
    for number, row in enumerate(body, start=2):
        login = row[key].strip()
        if login and row[0].strip() != "Points Possible":
            where.setdefault(login, []).append(number)
    duplicates = tuple((login, tuple(found)) for login, found in where.items() if len(found) > 1)
    shared = {login for login, _ in duplicates}
    filled = untouched = 0
    out_rows = [header]
    for row in body:
        login = row[key].strip()
        if row[0].strip() == "Points Possible":
            row[col] = fmt_points(report.quiz.max_points)
        elif login in scores and login not in shared:
            row[col] = fmt_points(scores[login])
            filled += 1
        elif login:
            untouched += 1
        out_rows.append(row)
    missing = tuple(sorted(set(scores) - set(where)))
    return CanvasExport(out, filled, missing, untouched, duplicates), csv_bytes(out_rows)
