"""``python -m course contents``: the start page and every page's links and goals, from the registry.

    python -m course contents            # which notebooks are out of date (exit 1 if any)
    python -m course contents --write    # rewrite them

Writes ``notebooks/00_start.ipynb`` and, in every lesson page, the cell
after the title (previous and next page, goals, time) and the last cell
(the next page), all made from the lessons' declarations
(``course.page.contents``). Run it after adding a lesson or changing a title,
summary, goals or time. No other cell is touched.

Exit status: 0 when every page is up to date (or, with --write, was
rewritten), 1 when a page is out of date and --write was not given.
"""

from __future__ import annotations

import argparse

from ..page.contents import sync


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "contents",
        help="write the start page and each page's links and goals from the lesson registry",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--write", action="store_true", help="rewrite the notebooks that are out of date")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stale = sync(write=args.write)
    for path in stale:
        print(f"{'wrote' if args.write else 'out of date'}: {path}")
    if not stale:
        print("the start page and every page's links are up to date")
    return 1 if stale and not args.write else 0
