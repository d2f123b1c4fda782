"""``python -m course pages DEST``: copy the lesson pages into a folder of yours, to open in JupyterLab.

An installed course (``pip install hopper-course``) keeps its pages inside
the package; this puts copies where you work. Run it again after an
upgrade: a page you have not changed is brought up to date, a page you
edited is kept as it is (the command says which), and nothing else in the
folder is touched. What it last copied is remembered, page by page, as a
SHA-256 in ``DEST/.hopper-course-pages.json``: a page whose bytes differ
from that is yours. Only regular files are read, each bounded: a FIFO, a
device or a huge file in a page's place (or the manifest's) is left alone
and named, never waited on or read whole.

Exit status: 0 when every page is in place (copied, up to date, or kept
because you edited it), 2 when DEST cannot be written (after saying why).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import _paths
from .._atomic import atomic_write_bytes, atomic_write_text
from .._files import read_regular
from ..errors import CourseError

MANIFEST = ".hopper-course-pages.json"
PAGE_LIMIT = 64 << 20  # a page (or a file in its place) read to compare, at most
MANIFEST_LIMIT = 4 << 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pages",
        help="copy the lesson pages into a folder of yours; pages you edited are never overwritten",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dest", type=Path, metavar="DEST", help="the folder to copy the pages into (made if missing)"
    )
    p.set_defaults(func=run)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Copied:
    copied: list[str] = field(default_factory=list)  # new here
    updated: list[str] = field(default_factory=list)  # unchanged by the learner, replaced by the new page
    current: list[str] = field(default_factory=list)  # already the shipped page
    kept: list[str] = field(default_factory=list)  # edited by the learner (or theirs): left alone
    not_files: list[str] = field(default_factory=list)  # a FIFO, device, folder or huge file in its place


def _manifest(dest: Path) -> dict[str, str]:
    path = dest / MANIFEST
    if not os.path.lexists(path):
        return {}
    # Only a regular file, bounded: a FIFO there is refused at once, never waited on (_files.read_regular).
    raw = read_regular(path, "the pages manifest", limit=MANIFEST_LIMIT)
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        raise CourseError(
            f"cannot read what was last copied ({e}); remove the file to start afresh", path=path
        ) from None
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(pages, dict) or not all(isinstance(v, str) for v in pages.values()):
        raise CourseError(
            "not a pages manifest (no 'pages' of names and hashes); remove it to start afresh", path=path
        )
    return dict(pages)


def copy_pages(dest: Path, source: Path | None = None) -> Copied:
    """Copy every page of ``source`` (the course's notebooks) into ``dest``; never overwrite an edited one."""
    source = source or _paths.notebooks_dir()
    pages = sorted(source.glob("*.ipynb"))
    if not pages:
        raise CourseError("no pages (*.ipynb) to copy", path=source)
    if dest.exists() and not dest.is_dir():
        raise CourseError("the destination is a file, not a folder", path=dest)
    last = _manifest(dest)
    done = Copied()
    remembered = dict(last)
    try:
        for page in pages:
            data = read_regular(page, "a course page", limit=PAGE_LIMIT)
            target = dest / page.name
            new = _sha(data)
            if not os.path.lexists(target):
                atomic_write_bytes(target, data)
                done.copied.append(page.name)
            else:
                try:  # a regular file of bounded size only: a FIFO or /dev/zero in its place is left alone
                    have = _sha(read_regular(target, "the page in DEST", limit=PAGE_LIMIT))
                except CourseError as e:
                    done.not_files.append(f"{page.name} ({e.message})")
                    continue
                if have == new:
                    done.current.append(page.name)
                elif have == last.get(page.name):  # what we copied last, unedited: bring it up to date
                    atomic_write_bytes(target, data)
                    done.updated.append(page.name)
                else:
                    done.kept.append(page.name)
                    continue  # the learner's page: remember nothing new about it
            remembered[page.name] = new
        atomic_write_text(dest / MANIFEST, json.dumps({"pages": remembered}, indent=1, sort_keys=True) + "\n")
    except OSError as e:
        raise CourseError(f"cannot copy the pages there ({e.strerror or e})", path=dest) from None
    return done


def run(args: argparse.Namespace) -> int:
    dest = args.dest.expanduser()
    done = copy_pages(dest)
    for what, names in (
        ("copied", done.copied),
        ("updated (you had not changed them)", done.updated),
        ("already up to date", done.current),
        ("kept as you edited them (not overwritten)", done.kept),
        ("left alone, not a page file", done.not_files),
    ):
        if names:
            print(f"{what}: {', '.join(names)}")
    print(f"The pages are in {dest.resolve()}: open them with `jupyter lab {dest}`.")
    return 0
