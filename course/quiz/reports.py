"""The reports of a grading run (``course.quiz.grade``): CSV and JSON files, written together or not at all.

``long.csv`` (one row per learner and question), ``wide.csv`` (one row per
learner, one column per question, total), ``items.csv`` and ``items.json``
(per question: percent correct, mean score, response distribution),
``skipped.csv``, ``flagged.csv``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from .._files import shown
from ..errors import CourseError
from ._io import csv_bytes, encoded, write_files_atomic
from .model import Code, MultipleSelect, Numeric, Question, Response, ShortText, SingleChoice, fmt_points
from .results import GradeReport

__all__ = ["REPORTS", "ItemStats", "item_statistics", "report_files", "write_reports"]

# A spreadsheet runs a cell that starts with one of these as a formula; a
# learner's free text must not run on the instructor's machine (OWASP "CSV
# injection"). Such a text response is written with a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    """A text cell for a report: a leading formula character made harmless with an apostrophe (OWASP)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _response_text(question: Question, response: Response) -> str:
    if response is None:
        return ""
    if isinstance(response, list):
        return ";".join(response)
    text = str(response)
    return _cell(text) if isinstance(question, ShortText | Code) else text


def _distribution(question: Question, responses: Iterable[Response]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for response in responses:
        if response is None:
            counts["(blank)"] += 1
        elif isinstance(question, MultipleSelect) and isinstance(response, list):
            counts.update(response)
            if not response:
                counts["(none selected)"] += 1
        elif isinstance(question, ShortText) and isinstance(response, str):
            counts[question.normalize(response)] += 1
        elif isinstance(question, Numeric) and isinstance(response, int | float):
            try:
                counts[format(float(response), ".10g")] += 1
            except OverflowError:  # an integer past float's range
                counts["(out of range)"] += 1
        else:
            counts[str(response)] += 1
    if isinstance(question, SingleChoice | MultipleSelect):
        ordered = {o.id: counts.pop(o.id, 0) for o in question.options}
        return {**ordered, **dict(counts.most_common())}
    return dict(counts.most_common(20))


@dataclass(frozen=True)
class ItemStats:
    question: str
    type: str
    max: float
    responses: int  # graded submissions
    answered: int  # of those, how many answered this question
    percent_correct: float  # full credit, after overrides
    mean_score: float
    distribution: dict[str, int]  # per option for choice questions, else the most common responses


def item_statistics(report: GradeReport) -> list[ItemStats]:
    """Per question: responses, answered, percent full credit, mean score, distribution."""
    stats = []
    n = len(report.results)
    for index, q in enumerate(report.quiz.questions):
        items = [r.items[index] for r in report.results]
        full = sum(1 for i in items if math.isclose(i.score, i.max))
        stats.append(
            ItemStats(
                question=q.id,
                type=q.type,
                max=q.points,
                responses=n,
                answered=sum(1 for i in items if i.response is not None),
                percent_correct=round(100.0 * full / n, 2) if n else 0.0,
                mean_score=round(sum(i.score for i in items) / n, 4) if n else 0.0,
                distribution=(
                    dict(Counter(i.outcome or "(blank)" for i in items).most_common())
                    if isinstance(q, Code)
                    else _distribution(q, (i.response for i in items))
                ),
            )
        )
    return stats


REPORTS = {
    "long": "long.csv",
    "wide": "wide.csv",
    "items_csv": "items.csv",
    "items_json": "items.json",
    "skipped": "skipped.csv",
    "flagged": "flagged.csv",
}


def report_files(report: GradeReport) -> dict[str, bytes]:
    """The reports' bytes by file name: long.csv, wide.csv, items.csv, items.json, skipped.csv, flagged.csv.

    A learner's text goes into a cell with any leading formula character made
    harmless (``_cell``); a file name goes in escaped (``_files.shown``); a lone
    surrogate, which UTF-8 cannot hold, goes in as its escape (``_io.encoded``).
    """
    qids = [q.id for q in report.quiz.questions]
    long_rows: list[list[object]] = [["learner", "question", "response", "score", "max", "attempts", "note"]]
    wide_rows: list[list[object]] = [["learner", *qids, "total"]]
    for r in report.results:
        for q, i in zip(report.quiz.questions, r.items, strict=True):
            long_rows.append(
                [
                    r.learner,
                    i.question,
                    _response_text(q, i.response),
                    fmt_points(i.score),
                    fmt_points(i.max),
                    i.attempts,
                    _cell(i.note),
                ]
            )
        wide_rows.append([r.learner, *(fmt_points(i.score) for i in r.items), fmt_points(r.total)])
    stats = item_statistics(report)
    item_rows: list[list[object]] = [
        ["question", "type", "max", "responses", "answered", "percent_correct", "mean_score", "distribution"]
    ]
    for st in stats:
        item_rows.append(
            [
                st.question,
                st.type,
                fmt_points(st.max),
                st.responses,
                st.answered,
                st.percent_correct,
                st.mean_score,
                _cell(json.dumps(st.distribution, ensure_ascii=False)),
            ]
        )
    skipped_rows: list[list[object]] = [["file", "reason"]]
    skipped_rows += [[_cell(shown(sk.path)), _cell(sk.reason)] for sk in report.skipped]
    flagged_rows: list[list[object]] = [["file", "learner", "reason"]]
    flagged_rows += [[_cell(shown(f.path)), f.learner, _cell(f.reason)] for f in report.flagged]
    summary = {
        "quiz": report.quiz.id,
        "version": report.quiz.version,
        "max_points": report.quiz.max_points,
        "graded": len(report.results),
        "skipped": len(report.skipped),
        "flagged": len(report.flagged),
        "items": [asdict(st) for st in stats],
    }
    return {
        REPORTS["long"]: csv_bytes(long_rows),
        REPORTS["wide"]: csv_bytes(wide_rows),
        REPORTS["items_csv"]: csv_bytes(item_rows),
        REPORTS["items_json"]: encoded(json.dumps(summary, indent=2, ensure_ascii=False) + "\n"),
        REPORTS["skipped"]: csv_bytes(skipped_rows),
        REPORTS["flagged"]: csv_bytes(flagged_rows),
    }


def write_reports(
    report: GradeReport, outdir: Path | str, *, also: Mapping[str, bytes] | None = None
) -> dict[str, Path]:
    """Write the reports (``report_files``) to ``outdir``, all of them new or (on a failure) all as before.

    ``also`` adds files to the same set (the CLI's ``canvas.csv``). Returns
    the paths by report key (``REPORTS``), and each of ``also``'s by its name.
    """
    files = report_files(report)
    extra = dict(also or {})
    clash = sorted(set(extra) & set(files))
    if clash:
        raise CourseError(f"{clash[0]} is a report's name; give the extra file another")
    written = write_files_atomic(outdir, {**files, **extra})
    paths = {key: written[name] for key, name in REPORTS.items()}
    return {**paths, **{name: written[name] for name in extra}}
