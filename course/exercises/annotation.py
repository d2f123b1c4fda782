"""The annotation exercise: mark what each line of the kernel does, then check.

The learner sees the lines of some snippet regions of a kernel with a dropdown beside
every line that starts a statement, picks a role for each ("issues wgmma",
"waits", a barrier and what it separates, ...), and presses Check. The key
lives in ``content/exercises/<lesson>.toml`` as data anchored to the source
text, never to line numbers::

    lesson = "<lesson id>"
    title = "..."
    regions = ["descriptor", "pipeline"]

    [[role]]
    id = "waits"
    label = "waits for the tensor cores"
    kind = "plain"                 # or "barrier": then every item needs `separates`

    [[item]]
    region = "pipeline"
    anchor = "wgmma.wait_group.sync.aligned 0;"
    role = "waits"                 # or "none": a line with nothing to mark, explained
    explanation = "..."
    cite = "PTX ISA, wgmma.wait_group"   # optional

An anchor is resolved by ``Snippet.find``: it must match exactly one line of
its region (an anchor that starts with spaces matches from the start of the
line, which tells apart the two ``__syncthreads();``). Anything wrong in the
file is an ``ExerciseError`` naming the file, the item and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._data import header_lines, key_line
from .._html import escape
from .._toml import read_toml
from ..errors import AnchorError, CourseError
from ..lessons import get_lesson
from ..snippets import Snippet, load_snippets
from . import progress

__all__ = [
    "NONE",
    "PROGRESS_ITEM",
    "Exercise",
    "ExerciseError",
    "Item",
    "LineVerdict",
    "Result",
    "Role",
    "check_marks",
    "exercise_path",
    "exercise_widget",
    "load_exercise",
]

NONE = "none"  # the role of a line with nothing to mark; every exercise has it
SHOWN_CHARS = 18  # about what a closed 13em drop-down shows of a role name; a longer one is cut
PROGRESS_ITEM = "exercise"  # the item id of a lesson's exercise in the learner's progress
_NONE_LABEL = "(nothing to mark)"
_TOP = {"lesson", "title", "intro", "regions", "role", "item"}
_ROLE_FIELDS = {"id", "label", "kind"}
_ITEM_REQUIRED = {"region", "anchor", "role", "explanation"}
_ITEM_OPTIONAL = {"separates", "cite"}
_BRACES_ONLY = {"{", "}", "};", "} else {", "else {"}


class ExerciseError(CourseError):
    """An exercise file is malformed, or marks do not fit the exercise."""


@dataclass(frozen=True)
class Role:
    id: str
    label: str
    kind: Literal["plain", "barrier"]


@dataclass(frozen=True)
class Item:
    """One keyed line: its resolved file line, the role, and why."""

    region: str
    anchor: str
    role: str
    explanation: str
    separates: str | None
    cite: str | None
    line: int
    text: str


@dataclass(frozen=True)
class Exercise:
    lesson_id: str
    path: Path
    title: str
    intro: str
    snippets: tuple[Snippet, ...]  # the regions, in page order
    roles: tuple[Role, ...]  # NONE first
    items: tuple[Item, ...]

    def role(self, role_id: str) -> Role:
        for role in self.roles:
            if role.id == role_id:
                return role
        raise KeyError(role_id)

    def item_at(self, line: int) -> Item | None:
        return next((item for item in self.items if item.line == line), None)

    def markable_lines(self) -> list[tuple[int, str]]:
        """(file line, text) of every line the learner can mark, in order."""
        return [(n, text) for snippet in self.snippets for n, text in _markable(snippet)]


def _code_part(line: str) -> str:
    return line.split("//", 1)[0].strip()


def _markable(snippet: Snippet) -> list[tuple[int, str]]:
    """Lines that start a statement: not blank, not a comment, not a lone brace, not a continuation."""
    out = []
    previous = ""  # code part of the previous code line in the region
    for number, text in snippet.numbered():
        code = _code_part(text)
        if not code or code.startswith("COURSE_TL("):
            continue  # blank, a comment, or a timeline stamp (nothing without -DCOURSE_TIMELINE)
        continuation = bool(previous) and previous[-1] not in ";{}"
        if code not in _BRACES_ONLY and not continuation:
            out.append((number, text))
        previous = code
    return out


def exercise_path(lesson_id: str) -> Path:
    return get_lesson(lesson_id).exercise_path


def _tables(data: dict[str, Any], key: str, raw: str, path: Path) -> list[Any]:
    """``data[key]`` as the list that ``[[key]]`` tables make; refuse any other shape."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ExerciseError(
            f"'{key}' must be [[{key}]] tables (got {type(value).__name__})",
            path=path,
            line=key_line(raw, key),
        )
    return value


def _text(value: object, what: str, path: Path, line: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExerciseError(f"{what} must be non-empty text (got {value!r})", path=path, line=line)
    return value


def load_exercise(path: Path | str) -> Exercise:
    """Parse and check an exercise file; every anchor is resolved against the current kernel."""
    path = Path(path)
    raw, data = read_toml(path, "the exercise", ExerciseError)

    unknown = set(data) - _TOP
    if unknown:
        raise ExerciseError(f"unknown top-level key(s) {sorted(unknown)}; allowed: {sorted(_TOP)}", path=path)
    lesson_id = _text(data.get("lesson"), "'lesson'", path, None)
    try:
        lesson = get_lesson(lesson_id)
    except CourseError as e:
        raise ExerciseError(e.message, path=path) from None
    title = _text(data.get("title"), "'title'", path, None)
    intro = data.get("intro", "")
    if not isinstance(intro, str):
        raise ExerciseError(f"'intro' must be text (got {intro!r})", path=path)

    snippets = load_snippets(lesson.kernel_path)
    regions = data.get("regions")
    if not isinstance(regions, list) or not regions or not all(isinstance(r, str) for r in regions):
        raise ExerciseError(
            f"'regions' must be a non-empty list of snippet names (got {regions!r})", path=path
        )
    for name in regions:
        if name not in snippets:
            raise ExerciseError(
                f"region {name!r} is not a snippet of {lesson.kernel_file} (it has: {', '.join(snippets)})",
                path=path,
            )
    chosen = tuple(snippets[name] for name in regions)

    roles = [Role(NONE, _NONE_LABEL, "plain")]
    role_lines = header_lines(raw, "[[role]]")
    for i, entry in enumerate(_tables(data, "role", raw, path)):
        where = role_lines[i] if i < len(role_lines) else None
        label = f"role {i + 1}"
        if not isinstance(entry, dict) or set(entry) != _ROLE_FIELDS:
            raise ExerciseError(
                f"{label} must have exactly the fields {sorted(_ROLE_FIELDS)}", path=path, line=where
            )
        role_id = _text(entry["id"], f"{label}: 'id'", path, where)
        if any(r.id == role_id for r in roles):
            raise ExerciseError(
                f"{label}: role id {role_id!r} is defined twice (or is the built-in 'none')",
                path=path,
                line=where,
            )
        if entry["kind"] not in ("plain", "barrier"):
            raise ExerciseError(
                f"{label}: 'kind' must be 'plain' or 'barrier' (got {entry['kind']!r})", path=path, line=where
            )
        roles.append(Role(role_id, _text(entry["label"], f"{label}: 'label'", path, where), entry["kind"]))
    role_kind = {r.id: r.kind for r in roles}

    items: list[Item] = []
    item_lines = header_lines(raw, "[[item]]")
    for i, entry in enumerate(_tables(data, "item", raw, path)):
        where = item_lines[i] if i < len(item_lines) else None
        if not isinstance(entry, dict):
            raise ExerciseError(f"item {i + 1} must be a table", path=path, line=where)
        label = f"item {i + 1} (anchor {entry.get('anchor')!r})"
        missing = _ITEM_REQUIRED - set(entry)
        extra = set(entry) - _ITEM_REQUIRED - _ITEM_OPTIONAL
        if missing or extra:
            raise ExerciseError(
                f"{label}: missing field(s) {sorted(missing)}, unknown field(s) {sorted(extra)}; "
                f"an item has {sorted(_ITEM_REQUIRED)} and may have {sorted(_ITEM_OPTIONAL)}",
                path=path,
                line=where,
            )
        region = _text(entry["region"], f"{label}: 'region'", path, where)
        if region not in regions:
            raise ExerciseError(
                f"{label}: region {region!r} is not one of this exercise's regions {regions}",
                path=path,
                line=where,
            )
        role = _text(entry["role"], f"{label}: 'role'", path, where)
        if role not in role_kind:
            raise ExerciseError(
                f"{label}: unknown role {role!r}; the roles are: {', '.join(role_kind)}",
                path=path,
                line=where,
            )
        explanation = _text(entry["explanation"], f"{label}: 'explanation'", path, where)
        separates = entry.get("separates")
        if role_kind[role] == "barrier":
            separates = _text(
                separates, f"{label}: a barrier needs 'separates' (what it keeps apart)", path, where
            )
        elif separates is not None:
            raise ExerciseError(
                f"{label}: 'separates' belongs to barrier roles only (role {role!r} is not one)",
                path=path,
                line=where,
            )
        cite = entry.get("cite")
        if cite is not None:
            cite = _text(cite, f"{label}: 'cite'", path, where)
        anchor = _text(entry["anchor"], f"{label}: 'anchor'", path, where)
        try:
            line = snippets[region].find(anchor)
        except AnchorError as e:
            raise ExerciseError(f"{label}: {e.message}", path=path, line=where) from None
        markable = dict(_markable(snippets[region]))
        if line not in markable:
            raise ExerciseError(
                f"{label}: the anchor resolves to line {line}, which does not start a statement; "
                "anchor the first line of the statement",
                path=path,
                line=where,
            )
        clash = next((other for other in items if other.line == line), None)
        if clash is not None:
            raise ExerciseError(
                f"{label}: line {line} already has an item (anchor {clash.anchor!r}); one item per line",
                path=path,
                line=where,
            )
        items.append(Item(region, anchor, role, explanation, separates, cite, line, markable[line]))
    if not items:
        raise ExerciseError("an exercise needs at least one [[item]]", path=path)
    return Exercise(lesson_id, path, title, intro, chosen, tuple(roles), tuple(items))


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------
Status = Literal["right", "wrong", "missed"]
_GENERIC = "None of the roles applies to this line; leave it unmarked."


@dataclass(frozen=True)
class LineVerdict:
    line: int
    text: str
    expected: str  # role id
    given: str  # role id, NONE when unmarked
    status: Status
    explanation: str


@dataclass(frozen=True)
class Result:
    exercise: Exercise
    verdicts: tuple[LineVerdict, ...]

    @property
    def score(self) -> int:
        """Keyed roles found."""
        return sum(v.status == "right" and v.expected != NONE for v in self.verdicts)

    @property
    def total(self) -> int:
        return sum(v.expected != NONE for v in self.verdicts)

    @property
    def full_marks(self) -> bool:
        return all(v.status == "right" for v in self.verdicts)

    def summary(self) -> str:
        stray = sum(v.status == "wrong" and v.expected == NONE for v in self.verdicts)
        text = f"{self.score} of {self.total} roles right"
        if stray:
            text += f"; {stray} marked line(s) with no role"
        return text + (". Full marks." if self.full_marks else ".")

    def html(self) -> str:
        """The verdict: the summary, then the keyed lines and any line marked wrongly (escaped).

        Lines with no role that were left unmarked are right and say nothing,
        so they are not listed: the table shows what the learner has to read.
        """
        e = escape
        mark = {"right": "&#10004;", "wrong": "&#10008;", "missed": "&#9675;"}
        colour = {"right": "#1a7f37", "wrong": "#cf222e", "missed": "#9a6700"}
        cell = (
            "border:1px solid var(--jp-border-color2,#d0d7de);padding:3px 6px;vertical-align:top;"
            "text-align:left;line-height:1.35;overflow-wrap:break-word"
        )
        rows = []
        for v in self.verdicts:
            if v.expected == NONE and v.status == "right":
                continue
            expected = self.exercise.role(v.expected).label
            given = self.exercise.role(v.given).label
            detail = (
                "" if v.status == "right" else f"<br><i>expected: {e(expected)}; you chose: {e(given)}</i>"
            )
            rows.append(
                f"<tr><td style='{cell};color:{colour[v.status]};white-space:nowrap'>"
                f"{mark[v.status]} {e(v.status)}</td><td style='{cell}'>{v.line}</td>"
                f"<td style='{cell}'><code style='white-space:pre-wrap'>{e(v.text.strip())}</code></td>"
                f"<td style='{cell}'>{e(v.explanation)}{detail}</td></tr>"
            )
        summary_colour = "#1a7f37" if self.full_marks else "#9a6700"
        return (
            f"<p style='color:{summary_colour}'><b>{e(self.summary())}</b></p>"
            # Fixed layout as wide as the output: the code wraps in its column and the "why" column
            # keeps the rest, so the table is never wider than the notebook (issue 22, item 4).
            "<table class='course-exercise' style='border-collapse:collapse;table-layout:fixed;width:100%'>"
            "<colgroup><col style='width:7em'><col style='width:3.5em'><col style='width:38%'><col></colgroup>"
            f"<tr><th style='{cell}'></th>"
            f"<th style='{cell}'>line</th><th style='{cell}'>code</th><th style='{cell}'>why</th></tr>"
            f"{''.join(rows)}</table>"
        )


def check_marks(exercise: Exercise, marks: dict[int, str]) -> Result:
    """Compare ``marks`` (file line -> role id; unmarked lines count as 'none') with the key."""
    markable = dict(exercise.markable_lines())
    known = {role.id for role in exercise.roles}
    for line, role in marks.items():
        if line not in markable:
            raise ExerciseError(
                f"line {line} is not a line to mark in this exercise "
                f"(those are: {', '.join(map(str, markable))})",
                path=exercise.path,
            )
        if role not in known:
            raise ExerciseError(
                f"unknown role {role!r} on line {line}; the roles are: {', '.join(known)}", path=exercise.path
            )
    verdicts = []
    for line, text in markable.items():
        item = exercise.item_at(line)
        expected = item.role if item else NONE
        given = marks.get(line, NONE)
        explanation = item.explanation if item else _GENERIC
        if given == expected:
            status: Status = "right"
        elif given == NONE:
            status = "missed"
        else:
            status = "wrong"
        if status != "right" and item is not None and item.separates:
            if exercise.role(given).kind == "barrier":
                explanation = f"Right kind, a barrier, but this one separates {item.separates}. {explanation}"
            else:
                explanation = f"This barrier separates {item.separates}. {explanation}"
        verdicts.append(LineVerdict(line, text, expected, given, status, explanation))
    return Result(exercise, tuple(verdicts))


# ---------------------------------------------------------------------------
# The widget
# ---------------------------------------------------------------------------
def progress_state(
    exercise: Exercise, marks: dict[int, str], attempts: int, result: Result
) -> dict[str, Any]:
    """What progress keeps of a Check: each mark with its line's text (lines move; text is found again)."""
    region_of = {n: snippet.name for snippet in exercise.snippets for n, _ in _markable(snippet)}
    markable = dict(exercise.markable_lines())
    return {
        "marks": [
            {"region": region_of[line], "line": line, "text": markable[line].strip(), "role": role}
            for line, role in sorted(marks.items())
        ],
        "attempts": attempts,
        "score": result.score,
        "total": result.total,
        "full_marks": result.full_marks,
        "summary": result.summary(),
    }


def restore_marks(exercise: Exercise, state: dict[str, Any]) -> tuple[dict[int, str], int]:
    """The saved marks that still fit the exercise (file line -> role), and how many no longer do.

    A mark is put back on the markable line of its region with the same text:
    the saved line number if its text is unchanged, else the one line of the
    region with that text. A mark whose line is gone (or now ambiguous), or
    whose role no longer exists, is dropped and counted.
    """
    saved = state.get("marks")
    if not isinstance(saved, list):
        return {}, 0
    roles = {role.id for role in exercise.roles}
    lines: dict[str, list[tuple[int, str]]] = {
        snippet.name: [(n, text.strip()) for n, text in _markable(snippet)] for snippet in exercise.snippets
    }
    marks: dict[int, str] = {}
    dropped = 0
    for mark in saved:
        if not isinstance(mark, dict):
            dropped += 1
            continue
        region, line, text, role = (mark.get(k) for k in ("region", "line", "text", "role"))
        candidates = lines.get(region, []) if isinstance(region, str) else []
        if role not in roles or role == NONE or not isinstance(text, str) or not candidates:
            dropped += 1
            continue
        same = [n for n, t in candidates if t == text]
        where = line if line in same else (same[0] if len(same) == 1 else None)
        if where is None or where in marks:
            dropped += 1
            continue
        marks[where] = str(role)
    return marks, dropped


def exercise_widget(
    lesson_id: str, path: Path | str | None = None, *, learner_id: str | None = None, restore: bool = True
) -> Any:
    """The exercise as ipywidgets: the regions' lines, a dropdown per markable line, Check.

    Returns a ``VBox`` subclass with ``dropdowns`` (file line -> Dropdown),
    ``check_button``, ``result`` (an HTML widget) and ``marks()``, so a test
    can set values, click, and read ``result.value``. Each Check saves the
    marks and the result to the learner's progress (``course.exercises.progress``;
    the learner is ``learner_id``, else ``COURSE_LEARNER``, else
    ``default``); ``restore=True`` puts saved marks back when the widget is built.
    """
    # heavy: ipywidgets, only on a page
    import ipywidgets as widgets

    from .._live import LiveBox  # heavy: ipywidgets (course._live), only on a page

    exercise = load_exercise(path or exercise_path(lesson_id))
    if exercise.lesson_id != lesson_id:
        raise ExerciseError(f"this exercise is for {exercise.lesson_id}, not {lesson_id}", path=exercise.path)
    options = [(role.label, role.id) for role in exercise.roles]
    labels = {role.id: role.label for role in exercise.roles}
    markable = dict(exercise.markable_lines())
    e = escape

    class ExerciseWidget(LiveBox):
        def __init__(self) -> None:
            self.exercise = exercise
            self.attempts = 0
            self.learner_id = learner_id
            self.dropdowns: dict[int, Any] = {}
            self.captions: dict[int, Any] = {}  # line -> the chosen role in full, when cut
            self.result = widgets.HTML()
            self.check_button = widgets.Button(description="Check", button_style="primary")
            self.check_button.on_click(self._check)
            head = widgets.HTML(f"<h4>{e(exercise.title)}</h4><p>{e(exercise.intro)}</p>")
            rows: list[Any] = []
            # One row per source line: a fixed-width mark column, then the line exactly as in
            # the file (no wrapping, indentation kept, the file's line number), so the listing
            # reads as code and the dropdowns line up.
            mark_width = "13em"  # the role names show in full in the dropdown list
            code_style = (
                "margin:0;padding:0 4px;white-space:pre;font-family:var(--jp-code-font-family,monospace);"
                "font-size:var(--jp-code-font-size,13px);line-height:28px"
            )
            # Each row is as wide as its line; the listing scrolls sideways as one block when a
            # line is longer than the panel, so no line is cut and the columns stay aligned.
            row_layout = widgets.Layout(
                align_items="center", margin="0", min_height="28px", width="max-content"
            )
            code_layout = widgets.Layout(flex="0 0 auto", margin="0", width="max-content", overflow="visible")
            for snippet in exercise.snippets:
                rows.append(widgets.HTML(f"<b>{e(snippet.path.name)}, snippet {e(snippet.name)}</b>"))
                width = len(str(snippet.end))
                for number, text in snippet.numbered():
                    code = widgets.HTML(
                        f'<pre style="{code_style}">{number:>{width}}  {e(text)}</pre>', layout=code_layout
                    )
                    if number in markable:
                        dropdown = widgets.Dropdown(
                            options=options,
                            value=NONE,
                            layout=widgets.Layout(width=mark_width, min_width=mark_width, margin="0 6px 0 0"),
                        )
                        self.dropdowns[number] = dropdown
                        rows.append(widgets.HBox([dropdown, code], layout=row_layout))
                        rows.append(self._chosen_caption(number, dropdown, mark_width))
                    else:
                        spacer = widgets.HTML(
                            layout=widgets.Layout(width=mark_width, min_width=mark_width, margin="0 6px 0 0")
                        )
                        rows.append(widgets.HBox([spacer, code], layout=row_layout))
            listing = widgets.VBox(rows, layout=widgets.Layout(overflow="auto", width="100%"))
            super().__init__(children=[head, listing, self.check_button, self.result])
            self.add_class("course-annotation")

        def _chosen_caption(self, number: int, dropdown: Any, indent: str) -> Any:
            """Under a line, its chosen role in full when the closed drop-down cuts it (issue 38; a
            wider column pushed Day 78's lines past the page)."""
            caption = widgets.HTML(layout=widgets.Layout(display="none", margin=f"0 0 2px {indent}"))
            self.captions[number] = caption

            def show(change: dict[str, Any]) -> None:
                label = labels.get(change["new"], "")
                cut = change["new"] != NONE and len(label) > SHOWN_CHARS
                small = "<small style='color:var(--jp-ui-font-color2,#57606a)'>"
                caption.value = f"{small}line {number}: {e(label)}</small>" if cut else ""
                caption.layout.display = "block" if cut else "none"

            dropdown.observe(show, names="value")
            return caption

        def marks(self) -> dict[int, str]:
            return {line: d.value for line, d in self.dropdowns.items() if d.value != NONE}

        def _check(self, _button: object = None) -> None:
            marks = self.marks()
            result = check_marks(self.exercise, marks)
            self.attempts += 1
            self.result.value = result.html()
            state = progress_state(self.exercise, marks, self.attempts, result)
            try:
                progress.record(lesson_id, "annotation", PROGRESS_ITEM, state, learner=self.learner_id)
            except CourseError as err:
                self.result.value += f"<p><small>Your progress was not saved: {e(str(err))}</small></p>"

        def restore_progress(self) -> int:
            """Put the saved marks back and show the last Check again; return how many marks."""
            try:
                state = progress.restore(lesson_id, "annotation", PROGRESS_ITEM, learner=self.learner_id)
            except CourseError as err:
                self.result.value = f"<p><small>Your saved marks were not restored: {e(str(err))}</small></p>"
                return 0
            if state is None:
                return 0
            marks, dropped = restore_marks(self.exercise, state)
            for line, role in marks.items():
                self.dropdowns[line].value = role
            attempts = state.get("attempts")
            self.attempts = attempts if type(attempts) is int and attempts >= 0 else 0
            note = (
                f"Restored {len(marks)} mark{'' if len(marks) == 1 else 's'} from your progress, "
                f"saved at {e(str(state.get('saved_at', 'an unknown time')))}."
            )
            if dropped:
                note += f" {dropped} no longer fit the kernel's lines and were left unmarked."
            self.result.value = (
                f"<p class='exercise-restored'><small>{note}</small></p>"
                + check_marks(self.exercise, marks).html()
            )
            return len(marks)

    built = ExerciseWidget()
    if restore:
        built.restore_progress()
    return built
