"""The rooms of ``course/`` and the one way imports point between them.

Every import statement in the package counts: those at the top of a file,
those inside a function and those under ``if TYPE_CHECKING:`` alike (a
function-local import is still a dependency; it only runs later). The
graph is built from the source with ``ast``, so it needs no import of the
package and sees every branch.

- ``LAYERS`` is the one declared order, lowest first; a module belongs to
  the entry with the longest prefix that names it, and imports only from
  its own layer or one below.
- No module imports itself back: ``graphlib`` finds no cycle, in the
  package's own modules or in any lesson's.
- The registry (``course.lessons``) sits above everything a lesson uses:
  the toolchain, the hardware facts, the benchmarks and the timeline take
  the ``Lesson`` they are handed, and ``course.lesson`` imports only the
  ground.
- The top of the package holds the vocabulary and ``_`` helpers only.
- Discovery refuses a lesson whose ``host.py`` lacks its ``HOST``, or holds
  another lesson's, naming the file.

``tests/test_layers.py`` and ``python tests/test_layers.py ROOT`` (any
checkout, e.g. an older commit's) print what breaks each rule.
"""

from __future__ import annotations

import ast
import graphlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. A module imports from its own layer or a lower one, never a higher one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the vocabulary and ground: every top-level module but the package's own surface
    ("ground", ("course.*",)),
    ("kernel", ("course.kernel",)),  # toolchain and machine
    ("hopper", ("course.hopper",)),  # PTX ISA and hardware facts as code
    ("bench", ("course.bench",)),
    ("timeline", ("course.timeline",)),
    ("lessons", ("course.lessons",)),  # the registry, the lesson packages, the ladder's host
    ("view", ("course.view",)),  # how kernel code is shown
    # the quiz's records and markup: what a submission is, read by progress and the try loop
    (
        "quiz records",
        ("course.quiz.model", "course.quiz.submission", "course.quiz._io", "course.quiz._markup"),
    ),
    ("tryout", ("course.tryout",)),  # the learner's own version, run safely
    ("exercises", ("course.exercises",)),  # what a learner answers and what is kept
    ("quiz", ("course.quiz",)),
    ("page", ("course.page",)),
    ("cli", ("course.cli",)),
    ("surface", ("course", "course.__main__")),  # what `import course` and `python -m course` run
)
REGISTRY = "course.lessons"
BELOW_REGISTRY = ("ground", "kernel", "hopper", "bench", "timeline")
# The top level: the vocabulary a lesson is written in, and private helpers.
VOCABULARY = {"__init__", "__main__", "errors", "lesson", "content", "constants", "snippets", "picture"}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((root / "course").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(root: Path) -> dict[str, set[str]]:
    """module -> the package modules its import statements name (every statement, wherever it is)."""
    mods = modules(root)

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(owner(alias.name) for alias in node.names if alias.name.startswith("course"))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != "course" and not target.startswith("course."):
                    continue
                for alias in node.names:  # `from . import gate` names a module
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in mods else owner(target))
        found.discard(None)  # type: ignore[arg-type]
        found.discard(name)
        graph[name] = found  # type: ignore[assignment]
    return graph


def layer_of(module: str) -> str:
    """The layer of the longest prefix naming ``module`` (``course.*``: any top-level module;
    ``course``: the package's ``__init__`` alone)."""
    best, length = "", -1
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            if prefix == "course.*":
                hit, size = module.count(".") == 1 and module != "course.__main__", 0
            elif prefix == "course":  # the package's own __init__, not everything in it
                hit, size = module == prefix, len(prefix)
            else:
                hit, size = module == prefix or module.startswith(prefix + "."), len(prefix)
            if hit and size > length:
                best, length = layer, size
    return best


RANK = {layer: i for i, (layer, _) in enumerate(LAYERS)}


def upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{m} ({layer_of(m)}) imports {t} ({layer_of(t)})"
        for m, targets in graph.items()
        for t in targets
        if RANK[layer_of(t)] > RANK[layer_of(m)]
    )


def registry_users(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{m} ({layer_of(m)}) imports {t}"
        for m, targets in graph.items()
        if layer_of(m) in BELOW_REGISTRY
        for t in targets
        if t == REGISTRY or t.startswith(REGISTRY + ".")
    )


def lesson_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(t for t in graph.get("course.lesson", ()) if layer_of(t) != "ground")


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every knot of modules that import each other (graphlib names one cycle; this cuts it and
    asks again, so each knot is named once)."""
    graph = {m: set(t) for m, t in graph.items()}
    found = []
    while True:
        try:
            tuple(graphlib.TopologicalSorter(graph).static_order())
            return found
        except graphlib.CycleError as e:
            ring = e.args[1]  # [a, b, ..., a]: each is imported by the next
            found.append(" -> ".join(reversed(ring)))  # each imports the next
            graph[ring[1]].discard(ring[0])


# Left for the helpers splitting them (issue 23's lead merges those splits): their local imports
# get their reasons there.
REASONS_PENDING: tuple[str, ...] = ()


def unexplained_local_imports(root: Path) -> list[str]:
    """Imports inside a function with no reason beside them or on the line above."""
    found = []
    for path in sorted((root / "course").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in REASONS_PENDING:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines), rel)
        local = {
            node.lineno: node
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(fn)
            if isinstance(node, ast.Import | ast.ImportFrom)
        }
        for lineno, node in sorted(local.items()):
            first = lineno
            while first - 1 in local or (
                first - 2 >= 0 and lines[first - 2].strip().startswith(("import ", "from "))
            ):
                first -= 1  # the reason may sit above the group of imports it belongs to
            above = lines[first - 2].strip() if first >= 2 else ""
            if "#" not in lines[node.end_lineno - 1] and not above.startswith("#"):
                found.append(f"{rel}:{lineno}: {lines[lineno - 1].strip()}")
    return found


def top_level(root: Path) -> list[str]:
    names = [p.stem for p in (root / "course").glob("*.py")]
    return sorted(n for n in names if n not in VOCABULARY and not n.startswith("_"))


GRAPH = imports(ROOT)


def test_every_module_has_a_layer() -> None:
    assert [m for m in GRAPH if not layer_of(m)] == []


def test_imports_point_down_the_declared_layers() -> None:
    assert upward(GRAPH) == []


def test_nothing_below_the_registry_looks_a_lesson_up() -> None:
    assert registry_users(GRAPH) == []


def test_lesson_imports_only_the_ground() -> None:
    assert GRAPH["course.lesson"], "course.lesson imports something (its paths, its errors)"
    assert lesson_imports(GRAPH) == []


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_the_rules_see_a_function_local_import_back_up() -> None:
    """The checks above can fail: one import, inside a function, from the ground to the registry."""
    graph = {m: set(t) for m, t in GRAPH.items()}
    graph["course.errors"].add(REGISTRY)
    assert upward(graph) and registry_users(graph) and cycles(graph)


def test_every_function_local_import_says_why() -> None:
    assert unexplained_local_imports(ROOT) == []


def test_the_top_level_holds_the_vocabulary_and_private_helpers() -> None:
    assert top_level(ROOT) == []


def _throwaway(tmp_path: Path, files: dict[str, str]) -> Path:
    """A lesson package ``day99`` in ``tmp_path``: its ``LESSON`` and ``files`` (name -> text)."""
    package = tmp_path / "day99"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from ...lesson import Lesson\n"
        "LESSON = Lesson(id='day99', day=99, title='t', kernel_file='k.cu', kernel_name='k',\n"
        "    arch='sm_90a', min_cc=(9, 0), max_cc=(9, 0), feature='f', notebook='n.ipynb',\n"
        "    snippets=(), size_macro='N', size_constant='kN')\n"
    )
    for name, text in files.items():
        (package / name).write_text(text)
    return package


@pytest.fixture(autouse=True)
def _no_throwaway_left() -> Iterator[None]:
    """The throwaway's modules leave with the test (the next one imports its own)."""
    yield
    for name in [n for n in sys.modules if n.startswith("course.lessons.day99")]:
        del sys.modules[name]
    registry = sys.modules.get("course.lessons")
    if registry is not None and hasattr(registry, "day99"):
        delattr(registry, "day99")


GOOD_HOST = "from .._ladder import TmaGemmHost\nfrom . import LESSON\nHOST = TmaGemmHost(LESSON)\n"

#: A module that grows past this splits by concern (issue 23: "no module over 600 lines").
MAX_LINES = 600


def _long_modules(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}: {n} lines"
        for path in (root / "course").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )


def test_no_module_is_over_the_line_limit(tmp_path: Path) -> None:
    assert _long_modules(ROOT) == []
    # and the rule sees one that is
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert _long_modules(tmp_path) == [f"course/big.py: {MAX_LINES + 1} lines"]


@pytest.mark.parametrize(
    "files, broken, says",
    [
        ({}, "host.py", "the package must have host.py defining HOST, a LessonHost of day99"),
        (
            {"host.py": "HOST = None\n"},
            "host.py",
            "host.py must define HOST, a LessonHost of day99 (found nothing)",
        ),
        (
            {"host.py": "from ..day76.host import HOST\n"},
            "host.py",
            "defines HOST for lesson day76, not for day99",
        ),
        (
            {"host.py": GOOD_HOST, "bench.py": "SPEC = 'fast'\n"},
            "bench.py",
            "must define SPEC, a BenchSpec (found str)",
        ),
    ],
    ids=["no host.py", "no HOST", "another lesson's HOST", "a SPEC that is no BenchSpec"],
)
def test_discovery_refuses_a_broken_plug_in_naming_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], broken: str, says: str
) -> None:
    from course import lessons
    from course.errors import CourseError

    package = _throwaway(tmp_path, files)
    monkeypatch.setattr(lessons, "__path__", [*lessons.__path__, str(tmp_path)])
    with pytest.raises(CourseError) as refused:
        lessons._discover([str(tmp_path)])  # the throwaway alone: the real lessons stay as they are
    message = str(refused.value)
    assert message.startswith(f"{package / broken}: lesson day99: ") and says in message


def test_discovery_takes_a_lesson_whose_plug_ins_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusals above are of the broken file, not of every throwaway."""
    from course import lessons
    from course.kernel.host import host_of

    _throwaway(tmp_path, {"host.py": GOOD_HOST})
    monkeypatch.setattr(lessons, "__path__", [*lessons.__path__, str(tmp_path)])
    found = lessons._discover([str(tmp_path)])
    assert list(found) == ["day99"] and host_of(found["day99"]).lesson == found["day99"]


def report(root: Path) -> int:
    """Print what breaks each rule in the checkout at ``root``; 1 when anything does."""
    graph = imports(root)
    found = {
        "modules with no layer": [m for m in graph if not layer_of(m)],
        "imports up the layers": upward(graph),
        "registry imports below it": registry_users(graph),
        "course.lesson imports above the ground": lesson_imports(graph),
        "an import cycle": cycles(graph),
        "top-level modules that are neither vocabulary nor private": top_level(root),
        "function-local imports without a reason": unexplained_local_imports(root),
    }
    for rule, broken in found.items():
        print(f"{rule}: {len(broken)}")
        for line in broken:
            print(f"    {line}")
    return int(any(found.values()))


if __name__ == "__main__":
    sys.exit(report(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
