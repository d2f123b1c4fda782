"""Build the course site and check it: every page with its outputs, every internal link, no error.

    python book/build.py [--out build/book] [--jobs N] [--skip-execute]

1. Stage: ``OUT/src`` is a copy of the checkout's files (git's list; ``notebooks/`` and ``build/``
   aside), so the README and ``book/`` link as they do in the checkout.
2. Execute: every page in ``notebooks/`` is run with nbclient (``--jobs`` at a time, default the
   cores) into ``OUT/src/notebooks/``, as a machine without a GPU runs it: ``CUDA_VISIBLE_DEVICES``
   empty, a throwaway workspace and compile cache, so the pages show the recorded evidence. The
   checkout's notebooks are never written. A widget needs a live kernel: a plain box of
   ipywidgets' text (a listing with a button) is shown as the HTML it holds, and any other widget
   (a quiz, a coding editor) becomes a note naming it and saying to open the page in JupyterLab
   (its text repr would show as a raw repr); the course's note before each widget, to run its
   cell after a restart (``course._live``), is left out. ``--skip-execute`` reuses the executed copies of the last build.
3. Render: ``sphinx-build -W --keep-going`` (conf.py) into ``OUT/html``: a warning, an unresolved
   cross-reference among them, fails the build.
4. Check the HTML (``check_site``): every relative link and image resolves to a file, and every
   ``#anchor`` to an id in it; no page loads a script, style sheet or image from the network (the
   site works offline); no page shows an error output (a traceback) or stderr.

Exit status 0 when the site is built and every check passed, 1 otherwise, with every problem
listed (file and what). The times of the three steps are printed. Runs offline.
"""

from __future__ import annotations

import argparse
import html as html_lib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
WIDGET = "application/vnd.jupyter.widget-view+json"
# What a widget on a page is, for the note that stands in for it (by its class name).
WIDGETS = {
    "QuizPanel": "The quiz",
    "CodingPanel": "The coding exercise (an editor and Check)",
    "ExerciseWidget": "The annotation exercise",
    "BudgetCalculator": "The shared-memory budget calculator",
}


def _checkout_files() -> list[Path]:
    """The checkout's files, relative: git's list (tracked, and new files not ignored), else a walk."""
    git = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True, text=True,
    )  # fmt: skip
    if git.returncode == 0 and git.stdout:
        return [Path(name) for name in git.stdout.split("\0") if name]
    skip = {"build", "__pycache__", ".ipynb_checkpoints"}
    return [
        p.relative_to(ROOT) for p in ROOT.rglob("*")
        if p.is_file() and not any(part.startswith(".") or part in skip for part in p.relative_to(ROOT).parts)
    ]  # fmt: skip


def stage(out: Path) -> Path:
    """OUT/src: a copy of the checkout's files but the pages (Sphinx needs real files: it resolves links)."""
    src = out / "src"
    for entry in src.iterdir() if src.exists() else []:
        if entry.name != "notebooks":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for rel in _checkout_files():
        if rel.parts[0] in {"notebooks", "build"} or not (ROOT / rel).is_file():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    (src / "notebooks").mkdir(parents=True, exist_ok=True)
    return src


def widget_note(output: dict[str, Any], page: str) -> dict[str, Any]:
    """The output that stands in for a course widget on the site: what it is, where to use it."""
    import nbformat

    text = output.get("data", {}).get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else text
    name = re.match(r"\s*(\w+)", text)
    kind = WIDGETS.get(name.group(1), f"This widget ({name.group(1)})") if name else "This widget"
    html = (
        '<div class="course-widget"><p><strong>In JupyterLab:</strong> '
        f"{kind} runs in a live kernel, so it is not shown here. Open <code>notebooks/{page}</code> "
        "in JupyterLab (<code>sh scripts/course.sh</code>) to use it.</p></div>"
    )
    return nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": kind})


# ipywidgets' own models that show what they hold without a kernel: text, and boxes of them.
_TEXT_MODELS = {"HTMLModel", "HTMLMathModel"}
_BOX_MODELS = {"VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel"}


def static_html(model_id: str, state: dict[str, Any]) -> str:
    """A plain box of ipywidgets as the HTML it shows (a button, which acts, shows nothing)."""
    model = state.get(model_id, {})
    name, values = model.get("model_name", ""), model.get("state", {})
    if name in _TEXT_MODELS:
        return str(values.get("value", ""))
    if name == "LabelModel":
        return "<p>" + html_lib.escape(str(values.get("value", ""))) + "</p>"
    if name in _BOX_MODELS:
        inner = [static_html(child.removeprefix("IPY_MODEL_"), state) for child in values.get("children", [])]
        return "<div>" + "".join(inner) + "</div>" if any(inner) else ""
    return ""


def widget_output(output: dict[str, Any], page: str, state: dict[str, Any]) -> dict[str, Any]:
    """A widget's output on the site: a plain box of text as its HTML, any other widget as a note."""
    import nbformat

    text = output["data"].get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else text
    if re.match(r"\s*(VBox|HBox|Box|HTML)\(", text):  # ipywidgets' own classes, not the course's
        shown = static_html(output["data"][WIDGET].get("model_id", ""), state)
        if shown:
            return nbformat.v4.new_output("display_data", data={"text/html": shown, "text/plain": text})
    return widget_note(output, page)


def _run_note(output: dict[str, Any]) -> bool:
    """The note before a course widget that says to run its cell (course._live): on the site the
    widget's own stand-in says where to use it."""
    from course._live import NOTE_CLASS

    html = output.get("data", {}).get("text/html", "")
    return f"class='{NOTE_CLASS}'" in ("".join(html) if isinstance(html, list) else html)


def execute(path: Path, dest: Path, env: dict[str, str]) -> tuple[str, float, list[str]]:
    """Run one page with nbclient into ``dest``; (name, seconds, problems)."""
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    os.environ.update(env)  # the kernel nbclient starts inherits this environment
    os.environ.pop("COURSE_REQUIRE_GPU", None)
    nb = nbformat.read(path, as_version=4)
    began = time.monotonic()
    problems = []
    # The kernel talks over Unix sockets in a folder of its own, not TCP: a free TCP port that
    # jupyter_client picks can be taken by another kernel (the test run starts many) before this
    # one binds it ("Address already in use", then "Kernel didn't respond").
    sockets = Path(tempfile.mkdtemp(prefix="course-kernel-"))
    try:
        NotebookClient(
            nb, km=KernelManager(kernel_name="python3", transport="ipc", ip=str(sockets / "k")),
            timeout=300, allow_errors=True, resources={"metadata": {"path": str(path.parent)}},
        ).execute()  # fmt: skip
    except Exception as err:  # a cell past its time limit, a dead kernel
        problems.append(f"{path.name}: not executed: {type(err).__name__}: {err}")
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    state = (
        nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    )
    for index, cell in enumerate(nb.cells):
        outputs = cell.get("outputs", [])
        for output in outputs:
            if output.get("output_type") == "error":
                problems.append(
                    f"{path.name}: cell {index} ends in {output.get('ename')}: {output.get('evalue')}"
                )
        outputs = [o for o in outputs if not _run_note(o)]
        cell["outputs"] = [
            widget_output(o, path.name, state) if WIDGET in o.get("data", {}) else o for o in outputs
        ]
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, dest / path.name)
    return path.name, time.monotonic() - began, problems


def execute_all(src: Path, jobs: int) -> list[str]:
    pages = sorted((ROOT / "notebooks").glob("*.ipynb"))
    scratch = Path(tempfile.mkdtemp(prefix="course-book-"))
    env = {
        "CUDA_VISIBLE_DEVICES": "",  # as a machine without a GPU shows the page
        "COURSE_WORKSPACE": str(scratch / "workspace"),
        "COURSE_CACHE_DIR": str(scratch / "nvrtc-cache"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    problems: list[str] = []
    try:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(execute, page, src / "notebooks", env) for page in pages]
            for future in futures:
                name, seconds, found = future.result()
                problems += found
                print(f"  executed {name} in {seconds:.1f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return problems


def render(src: Path, html: Path) -> list[str]:
    if html.exists():
        shutil.rmtree(html)
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", str(BOOK)]
    cmd += ["-d", str(html.parent / "doctrees"), str(src), str(html)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if (html / "README.html").exists():
        # The front page is the README (conf.py's root_doc): a server and a browser look for index.html.
        shutil.copy2(html / "README.html", html / "index.html")
    if run.returncode == 0:
        return []
    lines = [ln for ln in (run.stderr + run.stdout).splitlines() if ln.strip()]
    return [f"sphinx: {ln}" for ln in lines] or [f"sphinx-build exited {run.returncode}"]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        self.classes.append(a.get("class", ""))
        if tag == "a" and "href" in a:
            self.links.append((tag, a["href"]))
        elif tag == "link" and "href" in a and a.get("rel", "") != "canonical":
            self.links.append((tag, a["href"]))
        elif tag in {"img", "script", "iframe", "source"} and a.get("src"):
            self.links.append((tag, a["src"]))


def check_site(html: Path) -> list[str]:
    """Every problem of the built site: broken links and anchors, network assets, error outputs."""
    parsed: dict[Path, _Page] = {}
    for path in sorted(html.rglob("*.html")):
        if path.relative_to(html).parts[0] == "_static":
            continue  # the theme's template fragments, not pages
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        parsed[path.resolve()] = page
    problems = []
    for path, page in parsed.items():
        rel = path.relative_to(html.resolve())
        for cls in page.classes:
            words = cls.split()
            if "traceback" in words or ("output" in words and "stderr" in words):
                problems.append(f"{rel}: shows an error output ({cls})")
        for tag, url in page.links:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                if tag != "a" and parts.scheme != "data":
                    problems.append(f"{rel}: <{tag}> loads {url} from the network")
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.exists():
                problems.append(f"{rel}: link to {url}: no such file")
                continue
            if target.is_dir():
                target = target / "index.html"
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else set()
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{rel}: link to {url}: no #{parts.fragment} there")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-execute", action="store_true", help="reuse the last build's executed pages")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    times = {}
    began = time.monotonic()
    src = stage(out)
    problems = []
    if not args.skip_execute or not any((src / "notebooks").glob("*.ipynb")):
        print(f"Executing the pages ({args.jobs} at a time) ...", flush=True)
        problems += execute_all(src, max(1, args.jobs))
    times["execute"] = time.monotonic() - began
    print("Rendering with Sphinx ...", flush=True)
    problems += render(src, out / "html")
    times["render"] = time.monotonic() - began - times["execute"]
    if (out / "html" / "index.html").exists():
        problems += check_site(out / "html")
    else:
        problems.append(f"{out / 'html' / 'index.html'}: not written")
    times["check"] = time.monotonic() - began - times["execute"] - times["render"]
    spent = ", ".join(f"{k} {v:.0f} s" for k, v in times.items())
    if problems:
        print(f"The site has {len(problems)} problem(s) ({spent}):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    pages = sum(
        1 for p in (out / "html").rglob("*.html") if p.relative_to(out / "html").parts[0] != "_static"
    )
    print(f"Built {pages} pages into {out / 'html'}, every check passed ({spent}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
