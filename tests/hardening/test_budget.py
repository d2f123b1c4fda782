"""The hardening suite's size is stated in one place, per property, and none is starved."""

import ast
from pathlib import Path

from ._util import EXAMPLES, MIN_EXAMPLES

HERE = Path(__file__).parent


def test_every_property_has_a_budget_and_none_is_starved():
    assert all(n >= MIN_EXAMPLES for n in EXAMPLES.values()), EXAMPLES
    used = set()
    for path in HERE.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "budget":
                used.add(node.args[0].value)  # type: ignore[attr-defined]
    assert used == set(EXAMPLES), used ^ set(EXAMPLES)
