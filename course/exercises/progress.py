"""The learner's progress: what they answered, marked and passed, kept across kernel restarts.

    record(lesson_id, "quiz", question_id, {"response": "a", "attempts": 2, ...})
    restore(lesson_id, "quiz", question_id)  # that dict plus "saved_at", or None
    lesson_progress(lesson_id)               # {"quiz": {...}, "annotation": {...}, "coding": {...}}
    reset(lesson_id)                         # forget one page; the forgotten part goes to a backup first

One JSON file per learner in the workspace (``course.tryout.workspace``):
``<workspace>/progress/<learner>.json``. The learner is the id a page was
given, else ``COURSE_LEARNER``, else ``JUPYTERHUB_USER``, else the login
name, else ``default`` (``login_learner``); it is checked like a
submission's learner id, so it can only name a file in that folder. The file
holds, per lesson id, per kind (``course.content.CONTENT_KINDS``: quiz, annotation, coding), per
item id, the state the page saved and when (UTC).

The rules, because the file holds the learner's work:

- every save is a read-modify-write under a lock on a sibling ``.lock`` file
  (``filelock``: ``flock`` on POSIX, ``msvcrt`` on Windows), so two pages
  saving at once keep both updates;
- the new file is written atomically (``course._atomic``: temp file, fsync,
  rename), so a kill at any moment leaves the old file or the new, whole;
- a file that cannot be read, is not JSON, or is not this format never
  stops a page: it is moved aside to ``<learner>.corrupt-<time>.json``
  (nothing is deleted), a message on stderr says where, and progress starts
  empty;
- a value JSON reads but cannot write back (``1e999`` reads as inf; a lone
  surrogate) would refuse every later save: such items are left out, the
  file as it was is moved aside as above, and a message names them;
- reading works in a workspace that cannot be written (read-only, full): a
  save there is refused with a message, a read is not;
- ``reset`` writes the entries it removes to ``backups/`` before removing them.

This module knows no lesson by name: callers pass ids.
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock

from .._atomic import atomic_write_text
from .._files import read_regular, shown
from ..content import progress_kinds
from ..errors import CourseError
from ..quiz.submission import validate_learner_id
from ..tryout.workspace import workspace_root

__all__ = [
    "DEFAULT_LEARNER",
    "FORMAT",
    "LEARNER_ENV",
    "ProgressError",
    "learner_id",
    "learner_origin",
    "lesson_progress",
    "login_learner",
    "login_learner_id",
    "progress_path",
    "record",
    "record_items",
    "reset",
    "restore",
    "saved_lessons",
]

FORMAT = "hopper-course/progress/1"
LEARNER_ENV = "COURSE_LEARNER"
DEFAULT_LEARNER = "default"
FOLDER = "progress"

# A lesson id and an item id are keys in the file, never paths; still, keep them plain.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}\Z")


class ProgressError(CourseError):
    """Progress cannot be saved or read (bad id, unwritable workspace)."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")  # noqa: UP017 (datetime.UTC is 3.11+)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")  # noqa: UP017


# Where the default learner id comes from, in the order tried (README, "Your progress").
_ORIGINS = {
    LEARNER_ENV: "set by COURSE_LEARNER",
    "JUPYTERHUB_USER": "your JupyterHub user name",
    "login": "your login name on this machine",
}


def login_learner() -> tuple[str, str] | None:
    """``(id, origin)``: ``COURSE_LEARNER``, else ``JUPYTERHUB_USER``, else the login name.

    None when none is a valid id. ``origin`` is one of ``_ORIGINS``' keys.
    """

    chosen = os.environ.get(LEARNER_ENV)
    if chosen:  # set on purpose: a bad one is an error, never silently someone else
        return validate_learner_id(chosen), LEARNER_ENV
    candidates = [(os.environ.get("JUPYTERHUB_USER"), "JUPYTERHUB_USER")]
    try:
        candidates.append((getpass.getuser(), "login"))
    except (OSError, KeyError):
        pass
    for name, origin in candidates:
        if not name:
            continue
        try:
            return validate_learner_id(name), origin
        except CourseError:
            continue
    return None


def login_learner_id() -> str | None:
    """``COURSE_LEARNER``, else ``JUPYTERHUB_USER``, else the login name; None when none is a valid id.

    The one default identity: the page's quiz submits under it, and progress
    (the page's widgets and ``python -m course progress``) is kept under it.
    """
    found = login_learner()
    return None if found is None else found[0]


def learner_origin(learner: str) -> str:
    """Where ``learner`` came from, in words, for a learner to read ("your login name on this machine")."""
    found = login_learner()
    if found is not None and found[0] == learner:
        return _ORIGINS[found[1]]
    if learner == DEFAULT_LEARNER:
        return "the default: no COURSE_LEARNER, JupyterHub user or login name gave an id"
    return "the id this page was given"


def learner_id(learner: str | None = None) -> str:
    """The learner whose progress this is: ``learner``, else ``login_learner_id()``, else ``default``."""
    if learner is None:
        learner = login_learner_id() or DEFAULT_LEARNER
    return validate_learner_id(learner)


def progress_path(learner: str | None = None) -> Path:
    """``<workspace>/progress/<learner>.json``."""
    return workspace_root() / FOLDER / f"{learner_id(learner)}.json"


def _check_key(value: object, what: str) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise ProgressError(
            f"{what} must be 1-128 letters, digits, '.', '_', '@', ':' or '-', starting with a "
            f"letter or digit (got {value!r:.60})"
        )
    return value


def _check_kind(kind: object) -> str:
    if kind not in progress_kinds():
        raise ProgressError(f"kind must be one of {', '.join(progress_kinds())} (got {kind!r:.40})")
    return str(kind)


# ---------------------------------------------------------------------------
# The file: locked, read whole, written atomically
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def _locked(path: Path, *, reading: bool = False) -> Iterator[bool]:
    """Hold an exclusive lock on ``<path>.lock`` (the data file itself is replaced by rename).

    ``filelock.FileLock``: ``flock`` on POSIX, ``msvcrt.locking`` on Windows, so
    saves are serialised between processes everywhere. Yields whether the
    workspace can be written. ``reading=True`` (a snapshot) also works in a
    workspace that cannot be written (read-only, full): it reads without the
    lock, which is safe because every save replaces the file whole by a rename.
    """
    lock = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Can this workspace be written? O_NOFOLLOW: a lock file that is a symbolic link (to a file
        # outside the workspace) is refused, never created or locked through.
        os.close(os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644))
    except OSError as e:
        if e.errno == errno.ELOOP or lock.is_symlink():
            raise ProgressError(
                "the progress lock file is a symbolic link; remove it (it is remade as a plain file)",
                path=lock,
            ) from None
        if not reading:
            raise ProgressError(f"cannot save progress here ({e.strerror})", path=path.parent) from None
        yield False
        return
    with FileLock(lock, mode=0o644):
        yield True


def _empty(learner: str) -> dict[str, Any]:
    return {"format": FORMAT, "learner": learner, "lessons": {}}


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _problem(data: object) -> str | None:
    """What makes ``data`` not a progress file of this format; None when it is one."""
    if not isinstance(data, dict):
        return f"not a JSON object (got {type(data).__name__})"
    if data.get("format") != FORMAT:
        return f"format is {data.get('format')!r:.60}, expected {FORMAT!r}"
    lessons = data.get("lessons")
    if not isinstance(lessons, dict):
        return "'lessons' is not an object"
    for lesson, kinds in lessons.items():
        if not isinstance(kinds, dict):
            return f"lesson {lesson!r:.40} is not an object"
        for kind, items in kinds.items():
            if kind not in progress_kinds() or not isinstance(items, dict):
                return f"lesson {lesson!r:.40}: {kind!r:.40} is not one of {', '.join(progress_kinds())} with an object"
            for item, state in items.items():
                if not isinstance(state, dict):
                    return f"lesson {lesson!r:.40}, {kind} {item!r:.40}: not an object"
    return None


def _move_aside(path: Path, reason: str, then: str = "progress starts again from empty") -> Path:
    """Rename a bad progress file to ``<name>.corrupt-<time>.json`` (never over another) and say so."""
    for n in range(1, 1000):
        tag = _stamp() if n == 1 else f"{_stamp()}-{n}"
        target = path.with_name(f"{path.stem}.corrupt-{tag}.json")
        if not target.exists():  # we hold the lock: no other saver names one now
            break
    else:  # pragma: no cover
        raise ProgressError(f"cannot find a free name to move the unreadable file aside in {path.parent}")
    try:
        os.replace(path, target)
    except OSError as e:
        raise ProgressError(
            f"your progress file is unreadable ({reason}) and cannot be moved aside ({e.strerror})", path=path
        ) from None
    print(
        f"Your progress file {shown(path)} could not be read ({reason}). It was moved to {shown(target)}, "
        f"nothing was deleted, and {then}.",
        file=sys.stderr,
    )
    return target


# A progress file holds a few kilobytes per page; anything far larger is not one.
MAX_BYTES = 16 * 1024 * 1024


def _read(path: Path, learner: str, writable: bool = True) -> dict[str, Any]:
    """The file's data; a missing file is empty progress, a bad one is moved aside. Call under the lock.

    Read through the one reader of named files (``_files.read_regular``): a
    FIFO or a device in the file's place is moved aside, never waited on.
    """
    if not path.exists() and not path.is_symlink():
        return _empty(learner)
    try:
        raw = read_regular(path, "your progress file", limit=MAX_BYTES, error=ProgressError)
    except ProgressError as e:
        try:
            info = os.stat(path)
        except FileNotFoundError:  # gone meanwhile, or a link to nothing: nothing saved
            return _empty(learner)
        except OSError:
            raise e from None
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_BYTES:
            raise  # a file of ours that cannot be read now (permissions): say so, move nothing
        return _set_aside(path, e.message, learner, writable)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as e:
        return _set_aside(path, f"not valid JSON: {e}", learner, writable)
    except RecursionError:
        return _set_aside(path, "not valid JSON: nested too deeply", learner, writable)
    problem = _problem(data)
    if problem is not None:
        return _set_aside(path, problem, learner, writable)
    data["learner"] = learner
    dropped = _drop_unwritable(data)
    if dropped:
        _keep_aside(path, data, dropped, writable)
    return data


def _set_aside(path: Path, reason: str, learner: str, writable: bool) -> dict[str, Any]:
    """Empty progress in place of a bad file: moved aside where the workspace can be written, else left."""
    if writable:
        _move_aside(path, reason)
    else:
        print(
            f"Your progress file {shown(path)} could not be read ({reason}). It is left as it is "
            "(the workspace cannot be written), and progress shows as empty.",
            file=sys.stderr,
        )
    return _empty(learner)


def _drop_unwritable(data: dict[str, Any]) -> list[str]:
    """Remove what JSON reads but cannot write back (``1e999`` is inf; a lone surrogate); say what.

    Left in, one such value would refuse every later save of every page.
    """
    dropped = []
    for key in [k for k in data if k not in ("format", "learner", "lessons") and not _writable(data[k], k)]:
        dropped.append(f"the field {key!r:.40}")
        del data[key]
    lessons = data["lessons"]
    for lesson in list(lessons):
        if not _writable({}, lesson):
            dropped.append(f"lesson {lesson!r:.40}")
            del lessons[lesson]
            continue
        for kind, items in lessons[lesson].items():
            for item in [i for i, state in items.items() if not _writable(state, i)]:
                dropped.append(f"{lesson} {kind} {item!r:.40}")
                del items[item]
    return dropped


def _writable(value: object, key: str) -> bool:
    try:
        json.dumps({key: value}, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        return False
    return True


def _keep_aside(path: Path, cleaned: dict[str, Any], dropped: list[str], writable: bool) -> None:
    """Move the file as it was aside and save ``cleaned`` in its place; in a read-only workspace, only say so."""
    what = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
    reason = f"it holds values JSON cannot write back (a number too large, a lone surrogate) in {what}"
    if not writable:
        print(
            f"Your progress file {shown(path)}: {reason}. They are left out of what is shown; "
            "the file is unchanged (the workspace cannot be written).",
            file=sys.stderr,
        )
        return
    _move_aside(path, reason, then=f"{what} were left out and the rest is kept")
    _write(path, cleaned)


def _dump(data: dict[str, Any]) -> str:
    try:
        text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False, sort_keys=False) + "\n"
        text.encode("utf-8")  # a lone surrogate is no character: refused here, not halfway through a write
    except (TypeError, ValueError) as e:
        raise ProgressError(f"this progress cannot be saved as JSON ({e})") from None
    return text


def _write(path: Path, data: dict[str, Any]) -> None:
    text = _dump(data)
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise ProgressError(f"cannot save your progress ({e.strerror})", path=path) from None


# ---------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------
def record(
    lesson_id: str, kind: str, item: str, state: dict[str, Any], *, learner: str | None = None
) -> None:
    """Save ``state`` (JSON data) as the learner's latest for one item, with ``saved_at`` added.

    The caller counts attempts and passes them in ``state``; this replaces
    the item's previous state and leaves every other item as it was.
    """
    record_items(lesson_id, kind, {item: state}, learner=learner)


def record_items(
    lesson_id: str, kind: str, states: dict[str, dict[str, Any]], *, learner: str | None = None
) -> None:
    """``record`` for several items of one lesson and kind at once: one lock, one write."""
    _check_key(lesson_id, "a lesson id")
    _check_kind(kind)
    stamp = _now()
    entries = {}
    for item, state in states.items():
        _check_key(item, "an item id")
        if not isinstance(state, dict):
            raise ProgressError(f"a progress state must be a dict (got {type(state).__name__})")
        entries[item] = {**state, "saved_at": stamp}
    _dump(entries)  # refuse what JSON cannot hold before touching the file
    if not entries:
        return
    path = progress_path(learner)
    who = learner_id(learner)
    with _locked(path):
        data = _read(path, who)
        data["lessons"].setdefault(lesson_id, {}).setdefault(kind, {}).update(entries)
        _write(path, data)


def _snapshot(learner: str | None) -> dict[str, Any]:
    path = progress_path(learner)
    who = learner_id(learner)
    if not path.exists() and not path.is_symlink():
        return _empty(who)  # nothing saved yet: no lock file, no folder made just to read
    with _locked(path, reading=True) as writable:
        return _read(path, who, writable)


def restore(lesson_id: str, kind: str, item: str, *, learner: str | None = None) -> dict[str, Any] | None:
    """The item's last saved state (with ``saved_at``), or None when nothing was saved."""
    _check_key(lesson_id, "a lesson id")
    _check_kind(kind)
    _check_key(item, "an item id")
    state = _snapshot(learner)["lessons"].get(lesson_id, {}).get(kind, {}).get(item)
    return dict(state) if isinstance(state, dict) else None


def lesson_progress(lesson_id: str, *, learner: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Everything saved for one lesson: ``{kind: {item: state}}``, every kind present (maybe empty)."""
    _check_key(lesson_id, "a lesson id")
    saved = _snapshot(learner)["lessons"].get(lesson_id, {})
    return {kind: dict(saved.get(kind, {})) for kind in progress_kinds()}


def saved_lessons(*, learner: str | None = None) -> tuple[str, ...]:
    """The lesson ids the learner's progress holds anything for."""
    return tuple(_snapshot(learner)["lessons"])


def reset(lesson_id: str, *, learner: str | None = None) -> Path | None:
    """Forget one lesson's progress; return the backup holding what was removed (None: nothing saved).

    The removed entries are written to
    ``<workspace>/progress/backups/<learner>.<lesson>.<time>.json`` first
    (same format, only that lesson), so a mistaken reset loses nothing.
    """
    _check_key(lesson_id, "a lesson id")
    path = progress_path(learner)
    who = learner_id(learner)
    if not path.exists():
        return None
    with _locked(path):
        data = _read(path, who)
        removed = data["lessons"].get(lesson_id)
        if not removed:
            return None
        folder = path.parent / "backups"
        backup = None
        for n in range(1, 1000):
            tag = _stamp() if n == 1 else f"{_stamp()}-{n}"
            candidate = folder / f"{who}.{lesson_id}.{tag}.json"
            if not candidate.exists():
                backup = candidate
                break
        if backup is None:  # pragma: no cover
            raise ProgressError(f"cannot find a free backup name in {folder}")
        kept = {"format": FORMAT, "learner": who, "reset_at": _now(), "lessons": {lesson_id: removed}}
        _write(backup, kept)
        del data["lessons"][lesson_id]
        _write(path, data)
    return backup
