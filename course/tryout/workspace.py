"""The learner's own copy of a lesson's kernel, in a folder outside the course's files.

    copy = learner_copy(lesson)            # made from the lesson's kernel on first use
    copy.path                              # ~/hopper-course-work/<id>/<kernel file>
    copy.diff()                            # what the learner changed, as a unified diff
    learner_copy(lesson, reset=True)       # start again: the old copy is kept as a backup first

The rules, because the copy holds the learner's work:

- it lives in the workspace (``COURSE_WORKSPACE``, default
  ``~/hopper-course-work``), never inside the course's own files, so a
  ``git pull`` of the course never touches it and an edit never touches the
  lesson's kernel;
- it is created once, from the lesson's kernel, and never overwritten:
  creating it is an exclusive create, so two pages opening it at once
  cannot clobber an edit either;
- ``reset=True`` is the explicit "start again": the old copy is first moved
  to ``<lesson>/backups/<name>.<timestamp>.cu``, then a fresh copy is made;
- a suggested experiment is written to ``<lesson>/experiments/<name>.cu``,
  regenerated from the lesson's kernel on each run (a hand edit there is
  moved to the backups first, never lost);
- the default workspace is kept 0700 (set back whenever found open), and
  Submit makes the folders it writes 0700, so another user of the machine
  or the hub lists nothing in it;
- a workspace that is a file, is read-only or is full is a message that says
  so and what to do (``writing``), never a traceback; a copy already there is
  read (``_data.read_text``: a FIFO or a device is refused, not waited on)
  without writing anything.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .. import _paths
from .._atomic import atomic_write_text
from .._data import read_text
from .._files import MAX_KERNEL_BYTES
from .._html import escape
from ..errors import CourseError

if TYPE_CHECKING:
    from ..lesson import Lesson
    from ..view.listing import Hidden

__all__ = [
    "DEFAULT_WORKSPACE",
    "WORKSPACE_ENV",
    "LearnerCopy",
    "diff_html",
    "experiment_copy",
    "jupyterlab_link",
    "learner_copy",
    "lesson_folder",
    "served_root",
    "served_url",
    "unified_diff",
    "where_html",
    "workspace_root",
    "writing",
]

WORKSPACE_ENV = "COURSE_WORKSPACE"
DEFAULT_WORKSPACE = "~/hopper-course-work"


def workspace_root() -> Path:
    """The workspace folder: ``COURSE_WORKSPACE``, else ``~/hopper-course-work``; never in the course."""
    raw = os.environ.get(WORKSPACE_ENV) or DEFAULT_WORKSPACE
    root = Path(raw).expanduser().resolve()
    try:
        course = _paths.repo_root().resolve()
    except CourseError:
        return root  # no checkout beside the package: nothing to keep the workspace out of
    if root == course or course in root.parents:
        raise CourseError(
            f"the workspace must be outside the course's own files (got {root}, inside {course}); "
            f"set {WORKSPACE_ENV} to another folder, for example {Path(DEFAULT_WORKSPACE).expanduser()}"
        )
    if root.exists() and not root.is_dir():
        raise CourseError(
            f"the workspace must be a folder, and this is a file; set {WORKSPACE_ENV} to a folder "
            f"(for example {Path(DEFAULT_WORKSPACE).expanduser()}), or move the file away",
            path=root,
        )
    _keep_private(root, default=not os.environ.get(WORKSPACE_ENV))
    return root


def _keep_private(root: Path, *, default: bool) -> None:
    """The default workspace is set back to 0700 whenever it is found open to others (on a hub with
    0755 homes, another learner could list a learner's copies and submissions). Nothing is made
    here (reading makes no folder); Submit makes the folders it writes 0700 (``_atomic.private_folder``).
    A folder the learner named is never changed; a read-only place is left as it is."""
    with contextlib.suppress(OSError):
        if default and root.is_dir() and root.stat().st_uid == os.getuid() and root.stat().st_mode & 0o077:
            os.chmod(root, 0o700)


# What a failed write in the workspace means for the learner, by errno.
_WRITE_HINTS = {
    errno.EROFS: "the workspace is read-only",
    errno.EACCES: "you may not write there",
    errno.EPERM: "you may not write there",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "your disk quota is used up",
    errno.ENOTDIR: "a part of that path is a file, not a folder",
}


@contextlib.contextmanager
def writing(what: str, path: Path) -> Iterator[None]:
    """Turn a failed write of ``what`` at ``path`` into a CourseError that says why and what to do."""
    try:
        yield
    except OSError as e:
        hint = _WRITE_HINTS.get(e.errno or 0, "")
        advice = (
            f"free some space, or set {WORKSPACE_ENV} to a folder on another disk"
            if e.errno in (errno.ENOSPC, errno.EDQUOT)
            else f"set {WORKSPACE_ENV} to a folder you can write to"
        )
        because = f"{e.strerror or e}" + (f": {hint}" if hint else "")
        raise CourseError(f"cannot write {what} ({because}); {advice}", path=path) from None


def lesson_folder(lesson: Lesson) -> Path:
    return workspace_root() / lesson.id


def _read(path: Path, what: str) -> str:
    return read_text(path, what, limit=MAX_KERNEL_BYTES)


def _create_exclusive(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it exists; True when this call created it.

    The bytes go to a temporary file first, then a hard link names it:
    ``link`` fails when the name exists, so an existing copy (the learner's
    work) is never replaced, and a reader never sees half a file.
    """
    if path.exists() or path.is_symlink():
        return False  # nothing to write: a read-only workspace still opens an existing file
    with writing("your file", path):
        return _link_new(path, text)


def _link_new(path: Path, text: str) -> bool:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:
            # A file system without hard links: an exclusive create instead.
            try:
                with open(path, "x", encoding="utf-8") as f:
                    f.write(text)
            except FileExistsError:
                return False
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


def _backup(path: Path) -> Path:
    """Move ``path`` to ``backups/<stem>.<timestamp><suffix>`` beside it; never over another backup."""
    folder = path.parent / "backups"
    with writing("a backup of your file", folder):
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            tag = stamp if n == 1 else f"{stamp}-{n}"
            target = folder / f"{path.stem}.{tag}{path.suffix}"
            try:
                os.link(path, target)  # fails if the name is taken, so no backup is ever replaced
            except FileExistsError:
                continue
            path.unlink()
            return target
    raise CourseError(f"cannot find a free backup name for {path.name} in {folder}")


def unified_diff(original: str, changed: str, original_name: str, changed_name: str) -> str:
    """A unified diff (difflib), empty when the two texts are the same."""
    lines = difflib.unified_diff(
        original.splitlines(keepends=True),
        changed.splitlines(keepends=True),
        fromfile=original_name,
        tofile=changed_name,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_html(
    original: str,
    changed: str,
    original_name: str,
    changed_name: str,
    context: int = 3,
    hidden: Sequence[Hidden] = (),
) -> str:
    """The two texts side by side (``course.view.diff.side_by_side``, the one diff renderer).

    ``hidden``: lines of ``original`` not to show (an exercise's answer), nor what pairs with them.
    """
    from ..view.diff import side_by_side  # heavy: pygments (course.view), when a diff is shown

    return side_by_side(
        original.splitlines(),
        changed.splitlines(),
        original_name,
        changed_name,
        context=context,
        hide_a=hidden,
    )


def _running_servers() -> list[dict[str, Any]]:
    """The info of each running Jupyter server: its ``jpserver-<pid>.json`` in the runtime folder.

    The files jupyter_server writes at start and ``list_running_servers``
    reads (jupyter_server/serverapp.py), read here without importing
    ``jupyter_server.serverapp``: that import brings in jupyter_events and
    jsonschema's format checkers, which build some 40 grammars, about 2.5 s of
    CPU in every kernel that shows a coding panel (cProfile of the Day 78 page).
    A file whose server is gone is passed over, not deleted: it is not ours.
    tests/tryout/test_workspace.py checks this agrees with jupyter_server's reader.
    """
    try:
        # jupyter's own readers, when the served URL is asked for
        from jupyter_core.paths import jupyter_runtime_dir
        from jupyter_server.utils import check_pid  # light: not the server app
    except ImportError:
        return []
    servers = []
    try:
        files = sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json"))
    except OSError:
        return []
    for file in files:
        try:
            info = json.loads(file.read_text("utf-8"))
        except (OSError, ValueError):
            continue  # being written, or not ours to understand
        pid = info.get("pid") if isinstance(info, dict) else None
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and check_pid(pid):
            servers.append(info)
    return servers


def jupyterlab_link(path: Path, servers: list[dict[str, Any]] | None = None) -> str | None:
    """A URL that opens ``path`` in JupyterLab's editor, when a running server's root holds it.

    JupyterLab opens files by their path under the server's root
    (``<base_url>lab/tree/<relative path>``); a file outside every running
    server's root cannot be opened there, and the answer is None.
    """
    path = Path(path).resolve()
    for server in _running_servers() if servers is None else servers:
        root = server.get("root_dir") or server.get("notebook_dir")
        if not root:
            continue
        root_path = Path(root).expanduser().resolve()
        if root_path != path and root_path not in path.parents:
            continue
        base = server.get("base_url") or "/"
        if not base.endswith("/"):
            base += "/"
        return f"{base}lab/tree/{quote(path.relative_to(root_path).as_posix())}"
    return None


def where_html(path: Path, servers: list[dict[str, Any]] | None = None) -> str:
    """``path`` as a link that opens it in JupyterLab's editor (``jupyterlab_link``), or says why not."""
    url = jupyterlab_link(path, servers)
    shown = f"<code>{escape(str(path))}</code>"
    if url is not None:
        # Looks like a link (JupyterLab draws a <code> in a link as plain code): the theme's link
        # colour and an underline, on the code too.
        look = "color:var(--jp-content-link-color,#1976d2);text-decoration:underline"
        return (
            f"<a href='{escape(url)}' target='_blank' style='{look}'><code style='{look}'>"
            f"{escape(str(path))}</code></a> (opens in JupyterLab's editor)"
        )
    return (
        f"{shown} (outside the folder JupyterLab serves, so open it in any editor, or start "
        "JupyterLab in a folder that holds it)"
    )


def served_root() -> Path:
    """The folder ``scripts/course.sh`` has JupyterLab serve: the nearest one holding both the
    course's notebooks and the workspace, so that JupyterLab opens the learner's files too (the
    workspace is never inside the course: ``workspace_root``)."""
    return Path(os.path.commonpath([_paths.repo_root().resolve(), workspace_root()]))


def served_url(folder: str) -> str:
    """The JupyterLab address (under ``served_root``) of ``folder`` of the checkout: where
    ``scripts/course.sh`` opens JupyterLab (``notebooks``)."""
    path = (_paths.repo_root() / folder).resolve()
    return f"/lab/tree/{quote(path.relative_to(served_root()).as_posix())}"


@dataclass(frozen=True)
class LearnerCopy:
    """A file in the workspace made from a lesson's kernel, and what it changed."""

    lesson: Lesson
    path: Path
    created: bool = False  # this call made it (first use, or a reset)
    backup: Path | None = None  # where a reset moved the previous copy
    hidden: tuple[
        Hidden, ...
    ] = ()  # lines of the lesson's kernel its diff does not show (an exercise's answer)

    @property
    def original_name(self) -> str:
        return f"kernels/{self.lesson.kernel_file} (the lesson's)"

    def source(self) -> str:
        return _read(self.path, "your copy of the kernel")

    def original(self) -> str:
        return _read(self.lesson.kernel_path, "the lesson's kernel")

    @property
    def changed(self) -> bool:
        return self.source() != self.original()

    def diff(self) -> str:
        """What differs from the lesson's kernel, as a unified diff ("" when nothing)."""
        return unified_diff(self.original(), self.source(), self.original_name, str(self.path))

    def diff_html(self, context: int = 3) -> str:
        return diff_html(
            self.original(), self.source(), self.original_name, str(self.path), context, self.hidden
        )

    def link(self) -> str | None:
        return jupyterlab_link(self.path)

    def where_html(self) -> str:
        """Where the copy is, as a link that opens it in JupyterLab's editor when one can."""
        return where_html(self.path)

    def describe(self) -> str:
        if self.backup is not None:
            return f"Fresh copy of {self.lesson.kernel_file} at {self.path}; the previous one is kept at {self.backup}."
        if self.created:
            return f"Made your copy of {self.lesson.kernel_file} at {self.path}: edit it, then try it."
        state = "with your changes" if self.changed else "unchanged so far"
        return f"Your copy of {self.lesson.kernel_file} is at {self.path} ({state})."

    def _repr_html_(self) -> str:
        note = ""
        if self.backup is not None:
            note = f" The previous copy is kept at <code>{escape(str(self.backup))}</code>."
        return (
            f"<div class='course-copy'><p>Your copy of <code>{escape(self.lesson.kernel_file)}</code>: "
            f"{self.where_html()}.{note}</p>{self.diff_html()}</div>"
        )

    def __str__(self) -> str:
        return self.describe()


def learner_copy(lesson: Lesson, reset: bool = False) -> LearnerCopy:
    """The learner's copy of ``lesson``'s kernel: made on first use, never overwritten.

    ``reset=True`` moves an existing copy to a timestamped backup and makes a
    fresh one from the lesson's kernel.
    """
    path = lesson_folder(lesson) / lesson.kernel_file
    original = _read(lesson.kernel_path, "the lesson's kernel")
    backup = _backup(path) if reset and path.exists() else None
    created = _create_exclusive(path, original)
    return LearnerCopy(lesson, path, created, backup)


def experiment_copy(lesson: Lesson, name: str, source: str) -> LearnerCopy:
    """Write a suggested experiment's source to ``<lesson>/experiments/<name>.cu``.

    The file is regenerated from the lesson's kernel on each run; if it was
    edited by hand, the edit is moved to the backups first.
    """
    if not name or any(c not in "abcdefghijklmnopqrstuvwxyz0123456789-_" for c in name):
        raise CourseError(f"an experiment name must be lowercase letters, digits, - and _ (got {name!r})")
    path = lesson_folder(lesson) / "experiments" / f"{name}{Path(lesson.kernel_file).suffix}"
    backup = None
    if path.exists():
        if _read(path, "the experiment's file") == source:
            return LearnerCopy(lesson, path, False, None)
        backup = _backup(path)
    with writing("the experiment's file", path):
        atomic_write_text(path, source)
    return LearnerCopy(lesson, path, True, backup)
