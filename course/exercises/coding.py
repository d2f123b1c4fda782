"""Coding exercises: the learner writes a small piece of a lesson's kernel, and running it checks it.

Declared beside the lesson in ``content/coding/<lesson>.toml``::

    lesson = "<lesson id>"

    [[exercise]]
    id = "core-offset"                   # lowercase letters, digits and -
    title = "Where element (mn, k) lives: coreOffset"
    prompt = '''What to write, in words (`code` spans allowed).'''
    first = "return ((mn / 8)"           # the piece starts at the one kernel line containing this
    last = ";"                           # optional: it ends at the first line from there containing this
    starter = "return 0;  // your formula"
    hints = ["...", "..."]               # optional, shown one at a time

    [exercise.cpu]                       # optional: a CPU check where the course has a model
    model = "models:core_offset"         # a function of the lesson's package: models.core_offset
    args = { mn = [0, 64], k = [0, 64] } # every combination of these ranges, [start, stop)
    outputs = ["offset"]                 # what the model returns (an int, or a tuple in this order)
    harness = '''
    __device__ __forceinline__ int coreOffset(int mn, int k) {
    {piece}
    }
    '''
    eval = "out[0] = coreOffset(mn, k);"

    [[exercise.wrong]]                   # wrong pieces, with what each must do (tests and the GPU check)
    name = "swapped"
    code = "..."
    expect = "failed-check"              # or "fault", "timeout", "compile-error"

The piece is anchored to the kernel's text, never to line numbers: ``first``
must match exactly one line, so an edit of the kernel that moves or removes
it is an error naming the exercise. The learner's file
(``<workspace>/<lesson>/coding/<id>.cu``) is the lesson's kernel with the
piece replaced by the starter between two marker lines; only what lies
between the markers is checked (``course.exercises.coding_check``), spliced into the
lesson's own kernel, so the rest of the kernel is always the lesson's.
Anything wrong in the file is a ``CodingError`` naming the file, the line
and the exercise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._atomic import atomic_write_text
from .._data import header_lines, read_text
from .._toml import read_toml
from ..tryout.workspace import MAX_KERNEL_BYTES, _backup, _create_exclusive, lesson_folder, writing
from .coding_piece import CodingError, normalise_newlines, refuse_escape

if TYPE_CHECKING:
    from ..lesson import Lesson

__all__ = [
    "EXPECTABLE_WRONG",
    "MAX_PIECE_BYTES",
    "CodingError",
    "CodingExercise",
    "CpuCheck",
    "LearnerFile",
    "Wrong",
    "coding_path",
    "exercise_ids",
    "get_exercise",
    "learner_file",
    "learner_file_path",
    "load_coding",
    "splice",
]

# What a wrong piece may be declared to do on a GPU that runs the lesson.
EXPECTABLE_WRONG = ("failed-check", "fault", "timeout", "compile-error")
# Every exercise must show at least these two kinds of wrong (issue: a wrong result and a fault).
REQUIRED_WRONG = ("failed-check", "fault")
# A piece is a few lines; a submission's piece is refused beyond this many bytes (UTF-8).
MAX_PIECE_BYTES = 8192
# Points in one CPU check's grid of arguments, at most.
MAX_GRID = 1 << 18

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}\Z")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_TOP = {"lesson", "exercise"}
_FIELDS_REQUIRED = {"id", "title", "prompt", "first", "starter", "wrong"}
_FIELDS_OPTIONAL = {"last", "hints", "cpu", "cite"}
_CPU_FIELDS = {"model", "args", "outputs", "harness", "eval"}
_WRONG_FIELDS = {"name", "code", "expect", "why"}

BEGIN = "// >>> {id}: your code goes below this line; only the lines between the two markers are checked"
END = "// <<< {id}: your code ends above this line"


@dataclass(frozen=True)
class CpuCheck:
    """How to check a piece on the CPU: compile it into ``harness`` and compare with ``model``."""

    model: str  # "module:function" inside the lesson's package
    args: tuple[tuple[str, int, int], ...]  # (name, start, stop)
    outputs: tuple[str, ...]
    harness: str  # C++ with {piece}
    eval: str  # C++ statements that fill out[0..len(outputs))

    def model_function(self, lesson: Lesson) -> Callable[..., Any]:
        fn = lesson.function(self.model)
        if fn is None:
            raise CodingError(f"the CPU model {self.model!r} is not a function of course.lessons.{lesson.id}")
        return fn

    @property
    def points(self) -> int:
        total = 1
        for _, start, stop in self.args:
            total *= stop - start
        return total


@dataclass(frozen=True)
class Wrong:
    name: str
    code: str
    expect: str
    why: str = ""


@dataclass(frozen=True)
class CodingExercise:
    lesson_id: str
    id: str
    title: str
    prompt: str
    first: str
    last: str | None
    starter: str
    hints: tuple[str, ...]
    cpu: CpuCheck | None
    wrong: tuple[Wrong, ...]
    cite: str
    path: Path  # the TOML file
    line: int | None  # its [[exercise]] line

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)

    def region(self, kernel: str) -> tuple[int, int, str]:
        """(first line index, last line index, indentation) of the piece in ``kernel`` (0-based)."""
        lines = kernel.splitlines()
        hits = [i for i, ln in enumerate(lines) if _matches(ln, self.first)]
        if len(hits) != 1:
            found = (
                "no line" if not hits else f"{len(hits)} lines ({', '.join(str(h + 1) for h in hits[:5])})"
            )
            raise CodingError(
                f"exercise {self.id!r}: first = {self.first!r} must match exactly one line of the kernel; "
                f"it matches {found}. Make the anchor longer, or fix it after an edit of the kernel",
                path=self.path,
                line=self.line,
            )
        start = hits[0]
        end = start
        if self.last is not None:
            ends = [i for i in range(start, len(lines)) if _matches(lines[i], self.last)]
            if not ends:
                raise CodingError(
                    f"exercise {self.id!r}: last = {self.last!r} matches no line at or after line {start + 1}",
                    path=self.path,
                    line=self.line,
                )
            end = ends[0]
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        return start, end, indent

    def reference(self, kernel: str) -> str:
        """The lesson's own piece (the reference solution), without its common indentation."""
        start, end, indent = self.region(kernel)
        return _dedent(kernel.splitlines()[start : end + 1], indent)

    def markers(self) -> tuple[str, str]:
        return BEGIN.format(id=self.id), END.format(id=self.id)


def _matches(line: str, anchor: str) -> bool:
    # As Snippet.find: an anchor that starts with a space matches from the start of the line.
    return line.startswith(anchor) if anchor[:1].isspace() else anchor in line


def _dedent(lines: list[str], indent: str) -> str:
    return "\n".join(ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines)


def _indent(piece: str, indent: str) -> list[str]:
    # Split at LF alone (the piece's line ends are normalised): str.splitlines would also split at a
    # form feed, a vertical tab or U+2028, which end no line (nor a // comment) for the compiler.
    return [f"{indent}{ln}" if ln.strip() else "" for ln in piece.strip("\n").split("\n")] or [""]


def splice(kernel: str, exercise: CodingExercise, piece: str) -> str:
    """``kernel`` with the exercise's lines replaced by ``piece`` between the two marker lines
    (its line ends normalised first: the text the check saw, ``coding_piece.normalise_newlines``)."""
    piece = normalise_newlines(piece)
    start, end, indent = exercise.region(kernel)
    lines = kernel.splitlines()
    begin, close = exercise.markers()
    body = [f"{indent}{begin}", *_indent(piece, indent), f"{indent}{close}"]
    out = "\n".join([*lines[:start], *body, *lines[end + 1 :]])
    return out + ("\n" if kernel.endswith("\n") else "")


def piece_of(text: str, exercise: CodingExercise, path: Path | None = None) -> str:
    """What lies between the exercise's two marker lines in ``text`` (dedented)."""
    begin, close = exercise.markers()
    lines = text.splitlines()
    opens = [i for i, ln in enumerate(lines) if ln.strip() == begin]
    closes = [i for i, ln in enumerate(lines) if ln.strip() == close]
    if len(opens) != 1 or len(closes) != 1 or closes[0] < opens[0]:
        problem = (
            "is missing"
            if not opens or not closes
            else "appears more than once"
            if len(opens) > 1 or len(closes) > 1
            else "is in the wrong order"
        )
        raise CodingError(
            f"a marker line of exercise {exercise.id!r} {problem}: the file must hold exactly one\n  {begin}\n"
            f"and after it exactly one\n  {close}\nPut them back around your code, or start again with reset",
            path=path,
        )
    inner = lines[opens[0] + 1 : closes[0]]
    indent = lines[opens[0]][: len(lines[opens[0]]) - len(lines[opens[0]].lstrip())]
    return _dedent(inner, indent)


def check_piece_text(piece: object, exercise: CodingExercise) -> str:
    """``piece`` if it can be a piece (text, within the size limit, no marker lines); raise otherwise."""
    if not isinstance(piece, str):
        raise CodingError(f"exercise {exercise.id!r}: the code must be text (got {type(piece).__name__})")
    size = len(piece.encode("utf-8", "surrogatepass"))
    if size > MAX_PIECE_BYTES:
        raise CodingError(
            f"exercise {exercise.id!r}: the code is {size} bytes; a piece is at most {MAX_PIECE_BYTES} bytes"
        )
    if "\x00" in piece:
        raise CodingError(f"exercise {exercise.id!r}: the code contains a NUL character")
    if any("\ud800" <= c <= "\udfff" for c in piece):
        raise CodingError(
            f"exercise {exercise.id!r}: the code contains a character that is not text (a lone surrogate)"
        )
    if any(ln.strip() in exercise.markers() for ln in piece.splitlines()):
        raise CodingError(f"exercise {exercise.id!r}: the code must not contain the marker lines")
    return piece


# ---------------------------------------------------------------------------
# The exercise file.
# ---------------------------------------------------------------------------
def coding_path(lesson: Lesson) -> Path:
    return lesson.content_path("coding")


def _err(path: Path, line: int | None, message: str) -> CodingError:
    return CodingError(message, path=path, line=line)


def _text(entry: dict[str, Any], key: str, path: Path, line: int | None, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _err(path, line, f"{where}: {key} must be a non-empty string (got {type(value).__name__})")
    return value


def _parse_cpu(raw: object, path: Path, line: int | None, where: str) -> CpuCheck:
    if not isinstance(raw, dict):
        raise _err(path, line, f"{where}: [exercise.cpu] must be a table")
    unknown = set(raw) - _CPU_FIELDS
    missing = _CPU_FIELDS - set(raw)
    if unknown or missing:
        what = [
            f"unknown field(s) {', '.join(sorted(unknown))}" if unknown else "",
            f"missing field(s) {', '.join(sorted(missing))}" if missing else "",
        ]
        raise _err(path, line, f"{where}: cpu: {'; '.join(w for w in what if w)}")
    model = _text(raw, "model", path, line, f"{where}: cpu")
    if not re.fullmatch(r"[a-z_][a-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*", model):
        raise _err(
            path,
            line,
            f"{where}: cpu.model must be 'module:function' in the lesson's package (got {model!r})",
        )
    args_raw = raw["args"]
    if not isinstance(args_raw, dict) or not args_raw:
        raise _err(path, line, f"{where}: cpu.args must be a table of name = [start, stop]")
    args = []
    for name, rng in args_raw.items():
        ok = (
            _NAME.match(name)
            and isinstance(rng, list)
            and len(rng) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in rng)
            and rng[0] < rng[1]
        )
        if not ok:
            raise _err(
                path, line, f"{where}: cpu.args.{name} must be [start, stop] with start < stop (got {rng!r})"
            )
        args.append((name, int(rng[0]), int(rng[1])))
    outputs = raw["outputs"]
    if (
        not isinstance(outputs, list)
        or not outputs
        or not all(isinstance(o, str) and _NAME.match(o) for o in outputs)
    ):
        raise _err(path, line, f"{where}: cpu.outputs must be a non-empty list of names")
    harness = _text(raw, "harness", path, line, f"{where}: cpu")
    if harness.count("{piece}") != 1:
        raise _err(path, line, f"{where}: cpu.harness must contain {{piece}} exactly once")
    check = CpuCheck(
        model, tuple(args), tuple(outputs), harness, _text(raw, "eval", path, line, f"{where}: cpu")
    )
    if check.points > MAX_GRID:
        raise _err(path, line, f"{where}: cpu.args span {check.points} points; at most {MAX_GRID}")
    return check


def _parse_wrong(raw: object, path: Path, line: int | None, where: str) -> tuple[Wrong, ...]:
    if not isinstance(raw, list) or not raw:
        raise _err(path, line, f"{where}: at least one [[exercise.wrong]] is needed")
    out: list[Wrong] = []
    for entry in raw:
        if not isinstance(entry, dict):
            raise _err(path, line, f"{where}: each [[exercise.wrong]] must be a table")
        unknown = set(entry) - _WRONG_FIELDS
        if unknown:
            raise _err(path, line, f"{where}: wrong: unknown field(s) {', '.join(sorted(unknown))}")
        name = _text(entry, "name", path, line, f"{where}: wrong")
        if not _ID.match(name) or any(w.name == name for w in out):
            raise _err(
                path, line, f"{where}: wrong name {name!r} must be unique, lowercase letters, digits and -"
            )
        expect = entry.get("expect")
        if expect not in EXPECTABLE_WRONG:
            raise _err(
                path,
                line,
                f"{where}: wrong {name!r}: expect must be one of {', '.join(EXPECTABLE_WRONG)} (got {expect!r})",
            )
        why = entry.get("why", "")
        if not isinstance(why, str):
            raise _err(path, line, f"{where}: wrong {name!r}: why must be text")
        out.append(
            Wrong(
                name, _text(entry, "code", path, line, f"{where}: wrong {name!r}"), str(expect), why.strip()
            )
        )
    kinds = {w.expect for w in out}
    lacking = [k for k in REQUIRED_WRONG if k not in kinds]
    if lacking:
        raise _err(
            path,
            line,
            f"{where}: needs a wrong piece with expect = {' and one with expect = '.join(repr(k) for k in lacking)} "
            "(every exercise shows a wrong result and a fault)",
        )
    return tuple(out)


def _parse(lesson: Lesson, path: Path, text: str, data: dict[str, Any]) -> tuple[CodingExercise, ...]:
    unknown = set(data) - _TOP
    if unknown:
        raise _err(
            path,
            None,
            f"unknown top-level field(s): {', '.join(sorted(unknown))} (allowed: lesson, exercise)",
        )
    if data.get("lesson") != lesson.id:
        raise _err(
            path,
            None,
            f"lesson must be {lesson.id!r}, the lesson this file belongs to (got {data.get('lesson')!r})",
        )
    entries = data.get("exercise")
    if not isinstance(entries, list) or not entries:
        raise _err(path, None, "the file must declare at least one [[exercise]]")
    lines = header_lines(text, "[[exercise]]")
    kernel = read_text(lesson.kernel_path, "the lesson's kernel", CodingError)
    out: list[CodingExercise] = []
    for n, entry in enumerate(entries):
        line = lines[n] if n < len(lines) else None
        where = f"exercise {n + 1}"
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            where = f"exercise {entry['id']!r}"
        if not isinstance(entry, dict):
            raise _err(path, line, f"{where} must be a table")
        unknown = set(entry) - _FIELDS_REQUIRED - _FIELDS_OPTIONAL
        if unknown:
            raise _err(path, line, f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        missing = _FIELDS_REQUIRED - set(entry)
        if missing:
            raise _err(path, line, f"{where}: missing field(s) {', '.join(sorted(missing))}")
        ex_id = _text(entry, "id", path, line, where)
        if not _ID.match(ex_id):
            raise _err(path, line, f"{where}: id must be lowercase letters, digits and - (got {ex_id!r})")
        where = f"exercise {ex_id!r}"
        if any(e.id == ex_id for e in out):
            raise _err(path, line, f"{where} is declared twice; ids must be unique")
        hints = entry.get("hints", [])
        if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
            raise _err(path, line, f"{where}: hints must be a list of non-empty strings")
        last = entry.get("last")
        if last is not None and (not isinstance(last, str) or not last.strip()):
            raise _err(path, line, f"{where}: last must be a non-empty string")
        cite = entry.get("cite", "")
        if not isinstance(cite, str):
            raise _err(path, line, f"{where}: cite must be text")
        exercise = CodingExercise(
            lesson_id=lesson.id,
            id=ex_id,
            title=_text(entry, "title", path, line, where),
            prompt=_text(entry, "prompt", path, line, where).strip(),
            first=_text(entry, "first", path, line, where),
            last=last,
            starter=_text(entry, "starter", path, line, where).strip("\n"),
            hints=tuple(h.strip() for h in hints),
            cpu=_parse_cpu(entry["cpu"], path, line, where) if "cpu" in entry else None,
            wrong=_parse_wrong(entry["wrong"], path, line, where),
            cite=cite.strip(),
            path=path,
            line=line,
        )
        exercise.region(kernel)  # the anchors resolve, or a located error
        if exercise.cpu is not None:
            try:
                exercise.cpu.model_function(lesson)
            except ImportError as e:
                raise _err(path, line, f"{where}: cpu.model {exercise.cpu.model!r}: {e}") from None
            except CodingError as e:
                raise _err(path, line, f"{where}: {e.message}") from None
        for wrong in exercise.wrong:
            try:
                check_piece_text(wrong.code, exercise)
                refuse_escape(wrong.code, exercise, kernel)
            except CodingError as e:
                raise _err(path, line, f"{where}: wrong {wrong.name!r}: {e.message}") from None
        out.append(exercise)
    return tuple(out)


def load_coding(lesson: Lesson, path: Path | str | None = None) -> tuple[CodingExercise, ...]:
    """The lesson's coding exercises; () when it has no file. Raises CodingError, located."""
    file = Path(path) if path is not None else coding_path(lesson)
    if path is None and not file.exists():
        return ()
    text, data = read_toml(file, "the coding exercise file", CodingError)
    return _parse(lesson, file, text, data)


def exercise_ids(lesson: Lesson) -> tuple[str, ...]:
    """The ids of the lesson's coding exercises, in file order; () when it has none."""
    return tuple(e.id for e in load_coding(lesson))


def get_exercise(lesson: Lesson, exercise_id: str) -> CodingExercise:
    found = load_coding(lesson)
    for e in found:
        if e.id == exercise_id:
            return e
    names = ", ".join(e.id for e in found) or "none"
    raise CodingError(f"{lesson.id} has no coding exercise {exercise_id!r} (its exercises: {names})")


# ---------------------------------------------------------------------------
# The learner's file.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LearnerFile:
    lesson: Lesson
    exercise: CodingExercise
    path: Path
    created: bool = False
    backup: Path | None = None

    def text(self) -> str:
        return read_text(self.path, "your exercise file", CodingError, limit=MAX_KERNEL_BYTES)

    def piece(self) -> str:
        return piece_of(self.text(), self.exercise, self.path)

    def save(self, piece: str) -> Path | None:
        """Write ``piece`` between the markers; a file edited outside them is backed up first."""
        check_piece_text(piece, self.exercise)
        kernel = read_text(self.lesson.kernel_path, "the lesson's kernel", CodingError)
        backup = None
        if self.path.exists():
            current = self.text()
            try:
                outside_same = splice(kernel, self.exercise, piece_of(current, self.exercise)) == current
            except CodingError:
                outside_same = False
            if not outside_same:
                backup = _backup(self.path)
        with writing("your exercise file", self.path):
            atomic_write_text(self.path, splice(kernel, self.exercise, piece))
        return backup


def learner_file_path(lesson: Lesson, exercise: CodingExercise) -> Path:
    """Where the learner's file for ``exercise`` lives: ``<workspace>/<lesson>/coding/<id>.cu``."""
    return lesson_folder(lesson) / "coding" / f"{exercise.id}{Path(lesson.kernel_file).suffix}"


def learner_file(lesson: Lesson, exercise: CodingExercise, reset: bool = False) -> LearnerFile:
    """The learner's file for ``exercise``: made from the starter on first use, never overwritten.

    ``reset=True`` moves the existing file to a timestamped backup first.
    """
    path = learner_file_path(lesson, exercise)
    kernel = read_text(lesson.kernel_path, "the lesson's kernel", CodingError)
    backup = _backup(path) if reset and path.exists() else None
    created = _create_exclusive(path, splice(kernel, exercise, exercise.starter))
    return LearnerFile(lesson, exercise, path, created, backup)
