"""The course site (book/build.py): built as CI builds it, then three of its pages in Chromium.

The build runs every page with nbclient on this machine (no GPU: the pages show the recorded
evidence), renders the site with Sphinx and checks the HTML: it fails on a cell that ends in an
error, on any Sphinx warning (an unresolved link among them), on a broken relative link or
anchor, on an asset loaded from the network and on an error output shown (book/build.py says
how). Then the front page, a lesson page with recorded pictures and tables, and the instructors'
JupyterHub page are opened from the files (``file://``, no server) at 1024 and 1280 px, as the
browser tests of JupyterLab open their pages (Debian's Chromium; without it, or without
playwright, these skip with the reason unless COURSE_REQUIRE_BROWSER=1). What a reader needs:
nothing wider than the window, every picture drawn, the table of contents with the three parts,
and no request that leaves the machine. Screenshots go to ``site/`` in the browser tests' artifacts
folder (tests/browser/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOTS, artifacts_folder
from tests.browser.test_jupyterlab import CHROMIUM, CHROMIUM_ARGS, STEP_MS, _hard_limit, _missing

ROOT = Path(__file__).resolve().parents[2]
BUILD_LIMIT_S = 600  # every page run and the site rendered, on 2 busy cores
PAGES = ("index.html", "notebooks/day86_shapes.html", "book/instructors/jupyterhub.html")
WIDTHS = (1024, 1280)
MIN_PICTURE_PX = 200

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, float]:
    out = tmp_path_factory.mktemp("book")
    began = time.monotonic()
    run = subprocess.run(
        [sys.executable, str(ROOT / "book" / "build.py"), "--out", str(out)],
        capture_output=True, text=True, timeout=BUILD_LIMIT_S, cwd=ROOT,
    )  # fmt: skip
    return run, out / "html", time.monotonic() - began


def test_the_site_builds_and_every_check_passes(built: tuple[subprocess.CompletedProcess[str], Path, float]):
    run, html, seconds = built
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-8000:]
    assert "every check passed" in run.stdout, run.stdout
    print(f"the site built in {seconds:.0f} s: {run.stdout.strip().splitlines()[-1]}")
    for page in PAGES:
        assert (html / page).is_file(), page
    # Every lesson page is on the site, rendered with its outputs (a recorded picture or table).
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = (html / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert 'class="cell_output' in text, f"{nb.name}: no output on its page"


@pytest.fixture(scope="module")
def shots() -> Path:
    """The site's screenshots: a folder of their own in the browser tests' artifacts (whose PNGs the
    JupyterLab module empties when it starts), emptied of this module's old ones."""
    folder = artifacts_folder() / "site"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    return folder


@pytest.fixture(scope="module")
def chromium() -> Any:
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} is not installed (Debian package 'chromium')")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the Python package 'playwright' is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        with _hard_limit(STEP_MS // 1000 + 10, "starting Chromium"):
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_three_pages_of_the_site_in_chromium(built, chromium, shots: Path, width: int, request):
    run, html, _ = built
    assert run.returncode == 0, run.stderr[-4000:]
    request.node.user_properties.append((SCREENSHOTS, str(shots)))  # the run's summary names the folder
    page = chromium.new_page(viewport={"width": width, "height": 800})
    left: list[str] = []
    page.on(
        "request", lambda request: left.append(request.url) if not request.url.startswith("file:") else None
    )
    try:
        for name in PAGES:
            with _hard_limit(STEP_MS // 1000 + 10, f"opening {name}"):
                page.goto((html / name).as_uri(), wait_until="load", timeout=STEP_MS)
            page.screenshot(path=str(shots / f"site-{name.replace('/', '_')}-{width}.png"))
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{name} at {width} px: the page is {wide} px wide"
            captions = page.evaluate(
                "[...document.querySelectorAll('.caption-text')].map(e => e.textContent)"
            )
            for part in ("Learners", "Lessons", "Instructors", "Contributors", "Evidence"):
                assert part in captions, f"{name}: the contents have no part {part!r} ({captions})"
            pictures = page.evaluate(
                "[...document.querySelectorAll('.cell_output img')].map(i => [i.naturalWidth, i.naturalHeight])"
            )
            assert all(w > MIN_PICTURE_PX and h > MIN_PICTURE_PX for w, h in pictures), (name, pictures)
            if name.startswith("notebooks/"):
                assert len(pictures) >= 2, f"{name}: {len(pictures)} pictures drawn"
                assert page.locator(".cell_output table").count() >= 1, f"{name}: no table in its outputs"
                assert page.locator(".course-widget").count() >= 1, f"{name}: the quiz's note is missing"
                page.locator(
                    ".cell_output img"
                ).first.scroll_into_view_if_needed()  # its first picture, in view
                page.screenshot(path=str(shots / f"site-{name.replace('/', '_')}-{width}-picture.png"))
        assert not left, f"the site asked the network for {left}"
    finally:
        page.close()
