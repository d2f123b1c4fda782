"""Draw the pictures the pages draw from recordings alone, once, and keep them with the evidence.

    python tools/keep_renderings.py [--check]

For every lesson, the recorded climb (``page.climb()``) and the recorded
timeline (``page.timeline()``) of every GPU model with recordings (``evidence/<model>/``:
the H100's a page without a GPU shows, the H200's), each written to ``evidence/renderings/`` under
the key of everything it is drawn from (``course._kept.rendering_key``: the
drawing code, matplotlib's version, the recordings); a rendering that no
current key names is removed. Run it after recording again or after changing
the drawing code (the test ``tests/page/test_renderings.py`` says when).
``--check`` writes nothing and exits 1 when a rendering is missing or stray.
"""

from __future__ import annotations

import argparse
import sys

from course._kept import (
    DRAWN_WITH,
    drawn_with,
    keep_rendering,
    matplotlib_version,
    record_drawn_with,
    renderings_dir,
)
from course.page.renderings import kept_files, page_renderings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when one is missing or stray"
    )
    args = parser.parse_args(argv)
    wanted = page_renderings()
    have = kept_files()
    missing = sorted(set(wanted) - have)
    stray = sorted(have - set(wanted))
    if args.check:
        for key in missing:
            print(f"missing: {key}")
        for key in stray:
            print(f"stray: {key}")
        if drawn_with() != matplotlib_version():
            print(
                f"{DRAWN_WITH}: drawn with matplotlib {drawn_with()}, not this one ({matplotlib_version()})"
            )
            return 1
        return 1 if missing or stray else 0
    for key in stray:
        for suffix in (".png", ".txt"):
            (renderings_dir() / f"{key}{suffix}").unlink(missing_ok=True)
        print(f"removed {key}")
    for key in missing:
        data, text = wanted[key]()
        print(f"kept {keep_rendering(key, data, text)} ({len(data)} bytes)")
    # which matplotlib drew them: the test compares them byte for byte only under that one
    record_drawn_with()
    print(f"{len(wanted)} renderings, {len(missing)} drawn, {len(stray)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
