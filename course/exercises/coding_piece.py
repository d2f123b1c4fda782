"""A piece stays a piece: code that could leave its function is refused before anything compiles it.

    refuse_escape(piece, exercise, kernel)   # raises PieceRefused naming the line of the piece

A piece is spliced inside a function of the lesson's kernel (or of the CPU
check's harness). It is refused when it could put code anywhere else or
change what the check is:

- a brace, parenthesis or bracket that closes one the piece did not open,
  or one it opens and never closes (code after it would be at file scope);
- a preprocessor directive (``#`` or ``%:`` anywhere in code: ``#include``
  reads any file, ``#define`` rewrites the rest of the kernel), and
  ``_Pragma``;
- inline assembly (``asm``, ``__asm__``) and the compiler's ``__builtin_``
  functions (they reach the system without any header);
- a declaration of, or assignment to, one of the kernel's ``k...``
  constants (the check and the launch read them from the lesson's kernel);
- a declaration that could have linkage or run code outside the piece's
  statements: ``extern``, ``thread_local``, ``typedef`` and
  ``using`` (a function type names a function), ``decltype``/``typeof``
  (``decltype(printf) system;`` declares ``system``), a block-scope function
  declaration (``int system(const char*);``), attributes (``__attribute__``,
  ``__declspec``, ``[[...]]``: a section such as ``.init_array`` runs code
  before ``main``, so a ``static`` is allowed only without one), local classes (``struct``, ``class``, ``union``),
  lambdas and statement expressions (``({ ... })``). A block-scope ``extern
  char system[];`` has C linkage: cast and called, it is libc's ``system``;
  the CPU check also links only what the harness needs
  (``course.exercises.coding_check``), and bubblewrap is the wall: this
  list is the message a learner reads, naming the line;
- anything that makes the compiler read the text differently from a plain
  scan of it: trigraphs (``??=`` is ``#`` in older C++), line splices (a
  backslash at the end of a line joins it to the next, comments included),
  raw string literals (``R"x(...)x"`` may hold any text, newlines included),
  digraphs (``<%`` is ``{``, ``%:`` is ``#``), a backslash or a character
  that is not ASCII outside a comment or a literal.

The text checked is the text compiled: CR LF and a lone CR are each a
line's end to g++ and NVRTC (a lone CR ends a ``//`` comment for them), so
``normalise_newlines`` makes both an LF before the check, and the splice
(``course.exercises.coding.splice``) puts in that same text.

Why a small tokenizer rather than libclang or the compiler's own lexer:
the questions are lexical (where a comment or a literal ends, which
braces are code, whether there is a ``#``), and C++ decides them in its
first translation phases ([lex.phases]: trigraphs, line splices, then
preprocessing tokens). Once the features that make those phases differ
from one left-to-right scan are refused, the rest of the lexical grammar
is small: comments, string and character literals with their encoding
prefixes, pp-numbers (digit separators ``1'000`` included, so a ``'``
there does not start a literal), identifiers and punctuation. libclang
would tokenize the same way, as a large native dependency, and gives no
stronger guarantee for this question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from typing import Protocol

from ..errors import CourseError
from ..kernel.includes import normalise_newlines

__all__ = [
    "CodingError",
    "PieceRefused",
    "kernel_constant_names",
    "normalise_newlines",
    "refuse_escape",
    "tokens",
]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\n|\Z)")
_STRING_PREFIX = {"u8", "u", "U", "L"}
_RAW_PREFIX = {"R", "u8R", "uR", "UR", "LR"}
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_PUNCT = set("{}[]()<>;:,.?+-*/%^&|~!=")
_ASM = {"asm", "__asm", "__asm__"}
# Words that declare something with linkage, a type that can name a function, or code outside the statements.
_LINKAGE = {
    "extern": "extern declares a name from outside your code (a block-scope extern reaches any C function)",
    "thread_local": "a thread_local variable lives outside the function's run",
    "__thread": "a __thread variable lives outside the function's run",
    "_Thread_local": "a _Thread_local variable lives outside the function's run",
    "typedef": "a typedef can name a function type (and so declare a function)",
    "using": "a using declaration can name a function type or bring in other names",
    "decltype": "decltype can name a function's type (and so declare another function)",
    "typeof": "typeof can name a function's type (and so declare another function)",
    "__typeof": "__typeof can name a function's type (and so declare another function)",
    "__typeof__": "__typeof__ can name a function's type (and so declare another function)",
    "__attribute__": "an attribute can give a declaration linkage, a name or a section",
    "__attribute": "an attribute can give a declaration linkage, a name or a section",
    "__declspec": "an attribute can give a declaration linkage, a name or a section",
    "struct": "a local class's functions run outside the piece's statements",
    "class": "a local class's functions run outside the piece's statements",
    "union": "a local class's functions run outside the piece's statements",
    "template": "a template declares something outside the piece's statements",
    "operator": "an operator function is declared outside the piece's statements",
}
_DECLARATION = "a declaration the piece may not make"
# Words after which a name is declared (builtin types and declaration specifiers).
_DECL_WORDS = {
    "int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "auto", "void",
    "const", "constexpr", "consteval", "constinit", "static", "volatile", "register", "thread_local",
    "extern", "struct", "class", "union", "enum", "typedef", "using", "namespace", "typename",
    "__shared__", "__constant__", "__device__", "__half", "half",
}  # fmt: skip
# Words an expression may follow directly (so "return kTileK" is a use, not a declaration).
_EXPR_WORDS = {
    "return", "case", "sizeof", "alignof", "new", "delete", "throw", "co_return", "co_yield", "co_await",
    "else", "do", "goto", "decltype", "noexcept", "static_assert", "not", "and", "or", "xor", "bitand",
    "bitor", "compl", "not_eq", "and_eq", "or_eq", "xor_eq",
}  # fmt: skip


class CodingError(CourseError):
    """A coding exercise file is malformed, or a learner's file lost its markers.

    Defined here, below ``course.exercises.coding`` (which exports it), so the guard
    needs nothing from the exercise it guards."""


class _Exercise(Protocol):
    """What the guard reads of a ``CodingExercise``: its id, for the message."""

    @property
    def id(self) -> str: ...


class PieceRefused(CodingError):
    """The piece could leave its function, or change the check; nothing was compiled."""


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def tokens(piece: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, line) for each token of ``piece`` outside comments: kind is ident, number,
    literal or punct. Raises PieceRefused for what cannot be part of a piece (the module's list)."""

    piece = normalise_newlines(piece)

    def refuse(pos: int, why: str) -> PieceRefused:
        return PieceRefused(f"your code, line {_line(piece, pos)}: {why}")

    if m := _TRIGRAPH.search(piece):
        raise refuse(
            m.start(),
            f"{m.group()!r} is a trigraph (an old spelling of another character); write the character itself",
        )
    if m := _SPLICE.search(piece):
        raise refuse(
            m.start(),
            "the line ends with a backslash, which joins it to the next line; a piece cannot join lines",
        )
    i, n = 0, len(piece)
    while i < n:
        c = piece[i]
        if c in " \t\n\r\f\v":
            i += 1
        elif piece.startswith("//", i):
            end = piece.find("\n", i)
            i = n if end < 0 else end
        elif piece.startswith("/*", i):
            end = piece.find("*/", i + 2)
            if end < 0:
                raise refuse(i, "this /* comment is never closed")
            i = end + 2
        elif c.isascii() and (c.isalpha() or c == "_"):
            m = _IDENT.match(piece, i)
            assert m is not None
            word, after = m.group(), m.end()
            quote = piece[after : after + 1]
            if word in _RAW_PREFIX and quote == '"':
                raise refuse(
                    i, 'raw string literals (R"...") cannot be used in a piece; use an ordinary string'
                )
            if word in _STRING_PREFIX and quote in ('"', "'"):
                i = _literal(piece, after, refuse)
                yield "literal", piece[m.start() : i], _line(piece, m.start())
                continue
            yield "ident", word, _line(piece, i)
            i = after
        elif c.isdigit() or (c == "." and piece[i + 1 : i + 2].isdigit()):
            start = i
            i += 1
            while i < n:
                d = piece[i]
                if d in "eEpP" and piece[i + 1 : i + 2] in ("+", "-"):
                    i += 2
                elif d == "'" and (piece[i + 1 : i + 2].isalnum() or piece[i + 1 : i + 2] == "_"):
                    i += 2  # a digit separator
                elif d.isascii() and (d.isalnum() or d in "_."):
                    i += 1
                else:
                    break
            yield "number", piece[start:i], _line(piece, start)
        elif c in ('"', "'"):
            start = i
            i = _literal(piece, i, refuse)
            yield "literal", piece[start:i], _line(piece, start)
        elif c == "#" or piece.startswith("%:", i):
            raise refuse(i, "a preprocessor directive (#include, #define, ...) cannot be part of a piece; "
                         "write only the statements the exercise asks for")  # fmt: skip
        elif (
            piece.startswith(("<%", "%>"), i)
            or piece.startswith(":>", i)
            or (
                piece.startswith("<:", i)
                and not (piece.startswith("<::", i) and piece[i + 3 : i + 4] not in (":", ">"))
            )
        ):
            raise refuse(
                i,
                f"{piece[i : i + 2]!r} is a digraph (another spelling of a bracket); write the bracket itself",
            )
        elif c in _PUNCT:
            yield "punct", c, _line(piece, i)
            i += 1
        elif c == "\\":
            raise refuse(i, "a backslash outside a string or character literal")
        else:
            raise refuse(
                i, f"the character {c!r} (U+{ord(c):04X}) can only appear inside a comment or a string"
            )


def _literal(piece: str, i: int, refuse: Callable[[int, str], PieceRefused]) -> int:
    """The end of the string or character literal whose opening quote is at ``i``."""
    quote = piece[i]
    j = i + 1
    while j < len(piece):
        c = piece[j]
        if c == "\\":
            j += 2
        elif c == quote:
            return j + 1
        elif c == "\n":
            break
        else:
            j += 1
    what = "string" if quote == '"' else "character literal"
    raise refuse(i, f"this {what} is never closed on its line")


def kernel_constant_names(kernel: str) -> frozenset[str]:
    """The kernel's constants: every name of the form kName in its text."""
    return frozenset(re.findall(r"\bk[A-Z][A-Za-z0-9_]*\b", kernel))


def refuse_escape(piece: str, exercise: _Exercise, kernel: str) -> None:
    """Raise PieceRefused, naming the line of ``piece``, when it could leave its function (module docstring)."""
    check_tokens(piece, kernel_constant_names(kernel), exercise.id)


def check_tokens(piece: str, constants: Collection[str], exercise_id: str = "") -> None:
    toks = list(tokens(piece))
    stack: list[tuple[str, int]] = []
    for n, (kind, text, line) in enumerate(toks):
        where = f"your code, line {line}"
        if kind == "ident":
            if text in _ASM:
                raise PieceRefused(f"{where}: inline assembly ({text}) cannot be part of a piece")
            if text == "_Pragma" or text == "__pragma":
                raise PieceRefused(f"{where}: a pragma ({text}) cannot be part of a piece")
            if text.startswith("__builtin"):
                raise PieceRefused(
                    f"{where}: the compiler's built-in functions ({text}) cannot be used in a piece"
                )
            if text in _LINKAGE:
                raise PieceRefused(
                    f"{where}: {_DECLARATION} ({text}): {_LINKAGE[text]}; a piece declares only plain local "
                    "variables and uses what the code around it declares"
                )
            if _function_declaration(toks, n):
                raise PieceRefused(
                    f"{where}: {_DECLARATION} ({text}(...) declares a function, which has linkage); call "
                    "only what the code around it declares"
                )
            if text in constants and _declares(toks, n):
                raise PieceRefused(
                    f"{where}: {text} is one of the kernel's constants; a piece may use it but not declare "
                    "or assign it (the check uses the lesson's value)"
                )
        elif kind == "punct" and text in _OPEN:
            prev = toks[n - 1] if n else ("punct", ";", line)
            nxt = toks[n + 1][1] if n + 1 < len(toks) else ""
            if text == "[" and nxt == "[":
                raise PieceRefused(
                    f"{where}: {_DECLARATION} ([[...]]): an attribute can give a declaration linkage, a name "
                    "or a section"
                )
            if text == "[" and not (prev[0] in ("ident", "number", "literal") or prev[1] in (")", "]")):
                raise PieceRefused(
                    f"{where}: a lambda ([...](...) {{...}}) cannot be part of a piece: its body is a function "
                    "of its own; write the statements themselves"
                )
            if text == "(" and nxt == "{":
                raise PieceRefused(
                    f"{where}: a statement expression (({{ ... }})) cannot be part of a piece; write the "
                    "statements themselves"
                )
            stack.append((text, line))
        elif kind == "punct" and text in _CLOSE:
            if not stack or stack[-1][0] != _CLOSE[text]:
                what = f"closes a {_CLOSE[text]!r} your code did not open" if not stack else (
                    f"does not match the {stack[-1][0]!r} of line {stack[-1][1]}"
                )  # fmt: skip
                raise PieceRefused(
                    f"{where}: this {text!r} {what}: a piece must stay inside its function, "
                    "with every bracket it opens closed within it"
                )
            stack.pop()
    if stack:
        text, line = stack[-1]
        raise PieceRefused(f"your code, line {line}: this {text!r} is never closed within your code")


def _function_declaration(toks: list[tuple[str, str, int]], n: int) -> bool:
    """Is ``toks[n]`` the name of a block-scope function declaration, ``Type name(Type ...);``?

    ``Type name(value);`` declares a variable; only parameters that start with a type word (or none,
    or ``...``) make it a function. What this cannot tell (a parameter of a type the harness names),
    the CPU check's link refuses (``course.exercises.coding_check``)."""
    if n + 1 >= len(toks) or toks[n + 1][1] != "(" or n == 0:
        return False
    prev_kind, prev, _ = toks[n - 1]
    k = n - 1
    while k >= 0 and toks[k][1] in ("*", "&"):
        k -= 1
    if k < 0 or toks[k][0] != "ident" or toks[k][1] in _EXPR_WORDS:
        return False
    if not (toks[k][1] in _DECL_WORDS or toks[k][1].endswith("_t") or prev_kind == "ident"):
        return False
    first = toks[n + 2] if n + 2 < len(toks) else ("punct", "", 0)
    if first[1] == ")":
        after = toks[n + 3][1] if n + 3 < len(toks) else ""
        return after in (";", ",", "noexcept", "throw", "const", "->")
    depth, j = 0, n + 1
    while j < len(toks):
        depth += {"(": 1, ")": -1}.get(toks[j][1], 0)
        if toks[j][1] == "." and toks[j + 1 : j + 3] and all(t[1] == "." for t in toks[j + 1 : j + 3]):
            return True  # ... : a variadic parameter list
        if depth == 0:
            break
        j += 1
    return first[0] == "ident" and (first[1] in _DECL_WORDS or first[1].endswith("_t"))


def _declares(toks: list[tuple[str, str, int]], n: int) -> bool:
    """Does the name at ``toks[n]`` get declared or assigned there?"""
    nxt = toks[n + 1][1] if n + 1 < len(toks) else ""
    after = toks[n + 2][1] if n + 2 < len(toks) else ""
    if nxt == "=" and after != "=":
        return True
    k = n - 1
    while k >= 0 and toks[k][1] in ("*", "&", "const", "volatile"):
        k -= 1
    if k < 0:
        return False
    kind, word, _ = toks[k]
    if kind != "ident":
        return False
    if word in _DECL_WORDS or word.endswith("_t"):
        return True
    return k == n - 1 and word not in _EXPR_WORDS  # "Type kName": one name right after another
