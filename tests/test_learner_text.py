"""Text a learner reads speaks of the lesson, not of the course's own files, and names the GPU
of every device fact it states.

Every string of every quiz, annotation, coding exercise, exercise and
suggested experiment (what the page shows from ``content/``), and every
markdown cell of every page, is searched for a path into the course's own
machinery: the package, its tools, tests, recorded evidence, scripts and
content files. The kernels (``kernels/...``) and the pages themselves are
the lesson's material and may be named. TOML comments are for authors and
are not read.

Device facts (issue 35): learners run on H100s, and the course keeps an H200's recordings
too. A number that is a fact of one GPU (its SM count, its L2 size, a bandwidth, a
TFLOP/s rate) written into that text, into a string a lesson package renders, or into a
kernel's comments (the listings show them) must name the GPU it is about in its sentence
or the one before; a page's own numbers are formatted from the recording
(``course.kernel.evidence``) and are not written there. "60 MiB L2" alone is the H200's
and reads as the learner's; "60 MiB on an H200" says whose.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from course import _paths
from course._toml import read_toml

MACHINERY = re.compile(r"(?<![\w./-])(?:course|tools|tests|evidence|benchmarks|scripts|content|\.ci)/[\w.*-]")

CONTENT = sorted(
    p for kind in ("quizzes", "annotations", "coding", "exercises", "experiments")
    for p in (_paths.content_dir() / kind).glob("*.toml")
)  # fmt: skip
NOTEBOOKS = sorted(_paths.notebooks_dir().glob("*.ipynb"))


def _strings(value, where):
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def test_the_pattern_finds_machinery_paths_and_leaves_the_rest():
    for said in ("see course/lessons/day83/traffic.py", "(tools/try_gpu_check.py)", "in evidence/day78-race.txt",
                 "tests/lessons/day84/test_staging.py checks it", "format: content/quizzes/README.md"):  # fmt: skip
        assert MACHINERY.search(said), said
    for fine in ("kernels/gemm3_two_consumers.cu, snippet setup", "github.com/NVIDIA/cutlass/tree/main/tests/unit",
                 "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#async-proxy",
                 "examples/matmul/matmul_12.cuh", "recorded on an H200 on 2026-11-30"):  # fmt: skip
        assert not MACHINERY.search(fine), fine


@pytest.mark.parametrize("path", CONTENT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_content_text_names_the_courses_own_files(path: Path):
    _, data = read_toml(path, "content")
    found = [f"{where}: {m.group()!r} in {text[:120]!r}" for where, text in _strings(data, path.stem)
             for m in MACHINERY.finditer(text)]  # fmt: skip
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_page_prose_names_the_courses_own_files(path: Path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [f"cell {c.get('id')}: {m.group()!r}" for c in cells if c["cell_type"] == "markdown"
             for m in MACHINERY.finditer("".join(c["source"]))]  # fmt: skip
    assert not found, "\n".join(found)


# -- device facts ----------------------------------------------------------------------------

DEVICE_FACT = re.compile(
    r"\b(?:132|114|144|108) SMs\b"  # a GPU's SM count (H100 SXM and H200, H100 PCIe, the full GH100, A100)
    r"|\b\d+(?:\.\d+)? ?(?:MiB|MB)(?: of)? L2\b|\bL2 (?:of|is|holds) \d+(?:\.\d+)? ?(?:MiB|MB)\b"  # an L2 size
    r"|\b\d+(?:\.\d+)? ?TB/s\b"  # a bandwidth
    r"|\b\d[\d,]*(?:\.\d+)? (?:dense )?(?:FP16 |FP8 )?TFLOP/s\b"  # a rate
)
GPU_NAMED = re.compile(r"\b(?:H100|H200|H800|H20|A100|B200|GB200|RTX|L4|L40S?)\b")
PARAGRAPH_END = re.compile(r"\n\s*\n|\n(?=\s*[-*]\s)")  # a blank line, or a list item's start
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
ROOT = _paths.repo_root()


def unnamed_device_facts(text: str) -> list[str]:
    """The sentences of ``text`` that state a device fact with no GPU named in them or in the
    sentence before (in the same paragraph)."""
    out = []
    for paragraph in PARAGRAPH_END.split(text):
        before = ""
        for sentence in (s for s in SENTENCE_END.split(paragraph) if s.strip()):
            if DEVICE_FACT.search(sentence) and not GPU_NAMED.search(before + " " + sentence):
                out.append(" ".join(sentence.split()))
            before = sentence
    return out


def _content_texts(path: Path):
    _, data = read_toml(path, "content")
    yield from _strings(data, path.stem)


def _notebook_texts(path: Path):
    for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if c["cell_type"] == "markdown":
            yield f"cell {c.get('id')}", "".join(c["source"])


def _package_texts(path: Path):
    """The strings a lesson module renders: its string literals and f-strings' words (not docstrings)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }  # fmt: skip
    parts = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            parts.update(id(v) for v in n.values)
            yield (
                f"line {n.lineno}",
                "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in n.values),
            )
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs | parts:
            yield f"line {n.lineno}", n.value


def _kernel_texts(path: Path):
    """A kernel's comments, one paragraph per run of comment lines."""
    lines = path.read_text(encoding="utf-8").splitlines()
    run: list[str] = []
    for number, line in enumerate([*lines, ""], 1):
        found = re.search(r"//(.*)", line)
        if found:
            run.append(found.group(1).strip())
        elif run:
            yield f"comment ending at line {number - 1}", " ".join(run)
            run = []


READERS = {
    "content": lambda root: sorted((root / "content").rglob("*.toml")),
    "notebooks": lambda root: sorted((root / "notebooks").glob("*.ipynb")),
    "lesson packages": lambda root: sorted((root / "course" / "lessons").rglob("*.py")),
    "kernels": lambda root: sorted(p for p in (root / "kernels").rglob("*") if p.suffix in (".cu", ".cuh")),
}
TEXTS = {"content": _content_texts, "notebooks": _notebook_texts, "lesson packages": _package_texts,
         "kernels": _kernel_texts}  # fmt: skip


def device_fact_findings(root: Path, kind: str) -> list[str]:
    """Every unnamed device fact in the ``kind`` of learner text under ``root``, with its file and place."""
    return [
        f"{path.relative_to(root)} {where}: {sentence!r}"
        for path in READERS[kind](root)
        for where, text in TEXTS[kind](path)
        for sentence in unnamed_device_facts(text)
    ]


def test_the_device_fact_rule_finds_unnamed_facts_and_leaves_named_ones():
    for said in ("Rotate the inputs past 120 MiB, twice the 60 MiB L2.", "The copy peaks near 4.0 TB/s.",
                 "100 of the 132 SMs have nothing to do.", "A good kernel sustains 660 TFLOP/s.",
                 "Its L2 is 50 MiB, so four buffer sets are enough."):  # fmt: skip
        assert unnamed_device_facts(said) == [said], said
    for fine in ("twice the 60 MiB L2 of an H200", "the 132 SMs of an H100 SXM or an H200",
                 "An H100 SXM has 132 SMs. At what clock would that give 989.4 TFLOP/s?",
                 "at {} TB/s ({})", "{} SMs", "paid so that 128 SMs work instead of 32",
                 "a 16 KiB tile", "on the H100 (3.35 TB/s datasheet)"):  # fmt: skip
        assert unnamed_device_facts(fine) == [], fine
    # A new paragraph or list item does not inherit the GPU named before it.
    assert unnamed_device_facts("On an H200:\n\nthe L2 holds 60 MiB.") == ["the L2 holds 60 MiB."]


@pytest.mark.parametrize("kind", sorted(READERS))
def test_no_learner_text_states_a_device_fact_without_its_gpu(kind: str):
    found = device_fact_findings(ROOT, kind)
    assert not found, "name the GPU, or format the number from the recording:\n" + "\n".join(found)


PLANTED = "Rotate the inputs past 120 MiB, twice the 60 MiB L2."


def test_a_planted_h200_fact_fails_the_check_in_each_kind_of_text(tmp_path: Path):
    """The check above, run on a copy of the course with one H200 fact planted in each kind of text,
    finds each one where it was planted (and nothing it does not find in the course itself)."""
    for folder in ("content", "notebooks", "kernels"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copytree(ROOT / "course" / "lessons", tmp_path / "course" / "lessons")
    quiz = tmp_path / "content" / "quizzes" / "day86.toml"
    quiz.write_text(quiz.read_text(encoding="utf-8").replace('explanation = "', f'explanation = "{PLANTED} ', 1),
                    encoding="utf-8")  # fmt: skip
    page = tmp_path / "notebooks" / "day82_persistent.ipynb"
    cells = json.loads(page.read_text(encoding="utf-8"))
    markdown = next(c for c in cells["cells"] if c["cell_type"] == "markdown")
    markdown["source"] = [*markdown["source"], "\n\n" + PLANTED]
    page.write_text(json.dumps(cells), encoding="utf-8")
    module = tmp_path / "course" / "lessons" / "day86" / "figures.py"
    module.write_text(module.read_text(encoding="utf-8") + f'\nSAID = f"{{1}} {PLANTED}"\n', encoding="utf-8")
    kernel = tmp_path / "kernels" / "gemm4_persistent.cu"
    kernel.write_text(kernel.read_text(encoding="utf-8") + f"\n// {PLANTED}\n", encoding="utf-8")
    for kind, where in (
        ("content", quiz),
        ("notebooks", page),
        ("lesson packages", module),
        ("kernels", kernel),
    ):
        found = set(device_fact_findings(tmp_path, kind)) - set(device_fact_findings(ROOT, kind))
        assert len(found) == 1, (kind, found)
        (said,) = found
        assert said.startswith(str(where.relative_to(tmp_path))) and "60 MiB L2" in said, said
