"""The kernels' own constants, read from their source.

The Python host side of a lesson must use the same shapes as the C++
program. Rather than copy ``kTileWidth = 64`` into Python, read it from
the ``constexpr`` lines of the kernel, honouring ``#define`` defaults and
``-D`` overrides (the benchmark rebuilds with ``-DTMA_DIM=4096``).

A constant defined by integer arithmetic on earlier constants and macros
(``kBoxBRows = kBN / kClusterM``) is evaluated as C++ would: ``+ - * / %``
and parentheses on ints, ``/`` truncating toward zero. A choice on a build
flag, ``kBf16 ? 3.2e-2 : 4e-3``, takes the branch the integer condition picks
(then read as any other value). Anything else (a call, a cast, a float
expression) is left out, as before.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Mapping
from pathlib import Path

_DEFINE = re.compile(r"^\s*#define\s+([A-Za-z_]\w*)\s+(\S+)\s*$", re.M)
_CONSTEXPR = re.compile(r"^\s*constexpr\s+(?:int|size_t|unsigned|float|double)\s+(k\w+)\s*=\s*([^;]+);", re.M)
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?[fFuU]?$")
_INT_EXPR = re.compile(r"^[\w\s+\-*/%()]+$")
_CHOICE = re.compile(r"^([^?:]+)\?([^?:]+):([^?:]+)$")  # cond ? a : b, not nested


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _c_div,
    ast.Mod: lambda a, b: a - b * _c_div(a, b),
}


def _int_expression(expr: str, known: Mapping[str, int | float], macros: Mapping[str, str]) -> int | None:
    """The value of an integer expression over known constants and macros, or None."""
    if not _INT_EXPR.match(expr) or "//" in expr:
        return None
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None

    def value(node: ast.expr) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            v = known.get(node.id)
            if v is None and node.id in macros and _NUMBER.match(macros[node.id]):
                literal = macros[node.id].rstrip("uU")
                v = int(literal) if literal.lstrip("+-").isdigit() else None
            return v if type(v) is int else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = value(node.left), value(node.right)
            if left is None or right is None or (isinstance(node.op, (ast.Div, ast.Mod)) and right == 0):
                return None
            result: int = _OPS[type(node.op)](left, right)
            return result
        return None

    return value(tree)


def kernel_constants(path: Path, defines: Mapping[str, int | str] | None = None) -> dict[str, int | float]:
    """Every ``constexpr ... kName = literal-macro-or-integer-expression;`` of a kernel file."""
    text = path.read_text(encoding="utf-8")
    macros: dict[str, str] = dict(_DEFINE.findall(text))
    macros.update({k: str(v) for k, v in (defines or {}).items()})
    out: dict[str, int | float] = {}
    for name, expr in _CONSTEXPR.findall(text):
        expr = expr.strip()
        choice = _CHOICE.match(expr)
        if choice:
            cond = _int_expression(choice.group(1).strip(), out, macros)
            if cond is None:  # a condition of another kind: not a plain constant
                continue
            expr = (choice.group(2) if cond else choice.group(3)).strip()
        expr = macros.get(expr, expr)
        if not _NUMBER.match(expr):
            computed = _int_expression(expr, out, macros)
            if computed is not None:  # else an expression of another kind, not a plain constant
                out[name] = computed
            continue
        literal = expr.rstrip("fFuU")
        out[name] = float(literal) if any(c in literal for c in ".eE") else int(literal)
    return out
