"""The coding editor's browser side: the committed bundle is the one tools/code_editor/build.sh makes."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from course.exercises.code_editor import BUNDLE, CodeEditor

TOOL = Path(__file__).resolve().parents[2] / "tools" / "code_editor"


def test_the_bundle_was_built_from_the_committed_source_and_lock():
    # build.sh writes sha256(package-lock.json + index.js) into the bundle's first line.
    digest = hashlib.sha256((TOOL / "package-lock.json").read_bytes() + (TOOL / "index.js").read_bytes())
    first = BUNDLE.read_text("utf-8").splitlines()[0]
    found = re.search(r"sha256 ([0-9a-f]{64})", first)
    assert found, first
    assert found.group(1) == digest.hexdigest(), (
        "course/static/code_editor.js is not built from tools/code_editor/index.js and its lock: "
        "run sh tools/code_editor/build.sh"
    )


def test_every_package_is_pinned_to_the_version_the_lock_holds():
    wanted = json.loads((TOOL / "package.json").read_text())["devDependencies"]
    lock = json.loads((TOOL / "package-lock.json").read_text())["packages"]
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
        assert lock[f"node_modules/{name}"]["version"] == version, name


def test_the_bundle_is_an_anywidget_module_that_keeps_keys_from_jupyterlab():
    text = BUNDLE.read_text("utf-8")
    assert re.search(r"export\s*\{[^}]*as default", text)  # anywidget loads its default export
    assert "data-lm-suppress-shortcuts" in text
    assert "http://" not in text.split("\n", 1)[1].replace("http://www.w3.org", "")  # nothing fetched
    editor = CodeEditor(value="int x;", first_line=40)
    assert editor._esm == BUNDLE.read_text("utf-8") or Path(str(editor._esm)) == BUNDLE
    assert editor.first_line == 40 and editor.value == "int x;"
