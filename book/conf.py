"""Sphinx configuration of the course site: Jupyter Book 1's stack (Sphinx, MyST-NB, the book theme).

Built by ``python book/build.py`` (book/contributors/site.md says why this stack and not Jupyter
Book 2, and how the build works). The source folder is a staging copy of the checkout that
``build.py`` lays out: the checkout's files, with ``notebooks/`` holding the pages executed on this
machine. So the README is the front page, and every link of the README
and of ``book/`` resolves as it does on a code host: a page's link to a notebook is the rendered
lesson, a link to a kernel or any other file is a download of that file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

project = "Hopper at the metal: TMA and wgmma, hands on"
author = "the course's authors"
copyright = "the course's authors, MIT licence"

extensions = ["myst_nb"]
root_doc = "README"
# Only these are pages; everything else a page links to is a download.
include_patterns = [
    "README.md",
    "book/**/*.md",
    "notebooks/*.ipynb",
    "kernels/README.md",
    "content/quizzes/README.md",
    "evidence/README.md",
    "evidence/gemm_dev/README.md",
]
exclude_patterns = ["build", ".venv", "**/.ipynb_checkpoints"]

# The pages arrive executed (build.py, nbclient): MyST-NB only renders them.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["colon_fence"]
# The README and the pages link to headings by their GitHub-style slugs (#on-jupyterhub).
myst_heading_anchors = 4
# Every cross-reference must resolve: with -W a broken internal link fails the build.
nitpicky = True
# content/quizzes/README.md shows CSV in a ```csv block (a code host colours it); Pygments has no CSV
# lexer, so setup() names its plain-text lexer for csv (suppressing the warning works on Sphinx 9
# only: Sphinx 8.1, the newest Python 3.10 gets, warns under another name).

html_theme = "sphinx_book_theme"
html_title = "Hopper at the metal"
html_copy_source = False
html_show_sourcelink = False
html_theme_options: dict[str, Any] = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    # No download button: with html_copy_source off there is no source to download; Sphinx 9 hides
    # the button, but Sphinx 8.1 (Python 3.10) drew it with links into a _sources/ that is not there.
    "use_download_button": False,
    "use_fullscreen_button": False,
}
html_static_path = ["_static"]
html_css_files = ["course.css"]

# The site's table of contents, as the README cannot carry one (a code host would show it as text).
PARTS = {
    "Learners": [
        "book/learners/start",
        "book/learners/terminal",
        "book/learners/exercises",
        "book/learners/progress",
    ],
    "Lessons": None,  # every page in notebooks/, 00_start first
    "Instructors": [
        "book/instructors/grading",
        "content/quizzes/README",
        "book/instructors/sandboxing",
        "book/instructors/jupyterhub",
    ],
    "Contributors": [
        "book/contributors/layout",
        "book/contributors/tests",
        "book/contributors/cuda",
        "kernels/README",
        "book/contributors/site",
    ],
    "Evidence": ["evidence/README", "evidence/gemm_dev/README"],
}


def _toctree(srcdir: Path) -> str:
    out = []
    for caption, docs in PARTS.items():
        if docs is None:
            pages = sorted((srcdir / "notebooks").glob("*.ipynb"))
            # 00_start's title is the course's, as the README's is: the contents name it by its role.
            docs = [
                f"Start here <notebooks/{p.stem}>" if p.stem == "00_start" else f"notebooks/{p.stem}"
                for p in pages
            ]
        out.append("```{toctree}\n:hidden:\n:caption: " + caption + "\n\n" + "\n".join(docs) + "\n```\n")
    return "\n\n" + "\n".join(out)


def _add_toctree(app: Any, docname: str, source: list[str]) -> None:
    if docname == root_doc:
        source[0] += _toctree(Path(app.srcdir))


def setup(app: Any) -> None:
    from pygments.lexers.special import TextLexer

    app.add_lexer("csv", TextLexer)
    app.connect("source-read", _add_toctree)
