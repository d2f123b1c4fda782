"""Figures drawn once per kernel (``kept``), and once for all (``Rendering``, kept with the evidence).

Apart from ``course.picture`` so that a module that only declares a figure
function (``course.hopper.smem_budget``, imported by a page's coding check) does
not import matplotlib until the figure is drawn.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import _paths

if TYPE_CHECKING:
    from .picture import Picture


KEPT_PER_FUNCTION = 16  # pictures kept per figure function (a slider's positions, say)
_F = TypeVar("_F", bound=Callable[..., "Picture"])


def file_stamps(paths: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """Each file's (path, mtime in ns, size); (path, -1, -1) for one that is not there."""
    out = []
    for path in paths:
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def kept(build: _F | None = None, *, depends_on: Callable[..., Hashable | None] | None = None) -> Any:
    """A figure function whose Picture is built and drawn once per kernel for the same arguments.

    For figures that are a function of their arguments alone (no file, no
    measurement): Run All again shows the PNG already drawn (issue 28: Day
    78's figures cost 0.4-1 s each, every time). ``depends_on`` (called
    with the same arguments) adds what else the figure is drawn from, such
    as ``file_stamps`` of the recordings it reads; when it returns None the
    figure is not kept. A kept Picture that has not been drawn yet, or that
    anything changed since it was first drawn (``stale``, or drawn again),
    is built anew, so a changed figure never comes back; unhashable
    arguments are never kept.
    """
    if build is None:
        return functools.partial(kept, depends_on=depends_on)
    made: OrderedDict[Any, Picture] = OrderedDict()

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Picture:
        key: Any = (args, tuple(sorted(kwargs.items())))
        if depends_on is not None:
            also = depends_on(*args, **kwargs)
            if also is None:
                return build(*args, **kwargs)
            key = (key, also)
        try:
            fig = made.get(key)
        except TypeError:
            return build(*args, **kwargs)
        if fig is None or fig.stale or fig.__dict__.get("_redrawn", False):
            fig = made[key] = build(*args, **kwargs)
            while len(made) > KEPT_PER_FUNCTION:
                made.popitem(last=False)
        made.move_to_end(key)
        return fig

    return wrapper


# ---------------------------------------------------------------------------
# Renderings kept with the evidence: a picture drawn from recordings alone, drawn once for all.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Rendering:
    """A picture drawn before, from exactly the inputs and code its key names: its PNG and the
    words its ``Picture`` said (its repr), so a page shows it as it showed the Picture."""

    data: bytes = field(repr=False)
    text: str

    def png(self, dpi: int | None = None) -> bytes:
        return self.data

    def _repr_png_(self) -> bytes:
        return self.data

    def __repr__(self) -> str:
        return self.text


def renderings_dir() -> Path:
    """Where the kept renderings live: evidence/renderings/ (``tools/keep_renderings.py`` writes them)."""
    return _paths.evidence_dir() / "renderings"


def rendering_key(kind: str, code: Iterable[Path], inputs: Iterable[Path | str]) -> str:
    """``kind`` and a hash of everything the picture is drawn from: matplotlib's version, the
    drawing ``code``'s source files, and the ``inputs`` (a recording's file, or words such as the
    lessons' names). Change any of them and the key changes, so a kept rendering is never shown
    for a picture it is not."""
    h = hashlib.sha256(kind.encode())
    h.update(matplotlib_version().encode())
    for part in (*code, *inputs):
        if isinstance(part, Path):
            try:
                h.update(b"file:" + part.read_bytes())
            except OSError:
                h.update(b"missing:" + part.name.encode())
        else:
            h.update(b"text:" + part.encode())
    return f"{kind}-{h.hexdigest()[:24]}"


DRAWN_WITH = "drawn_with.json"  # in renderings_dir(): {"matplotlib": the version that drew them}


def matplotlib_version() -> str:
    """The installed matplotlib's version (part of every rendering's key), or "none"."""
    try:
        return importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def drawn_with() -> str | None:
    """The matplotlib version the kept renderings were drawn with, None when it is not recorded."""
    try:
        return str(json.loads((renderings_dir() / DRAWN_WITH).read_text("utf-8"))["matplotlib"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_drawn_with() -> None:
    """Record this matplotlib as the one that drew the kept renderings (``tools/keep_renderings.py``)."""
    (renderings_dir() / DRAWN_WITH).write_text(
        json.dumps({"matplotlib": matplotlib_version()}) + "\n", "utf-8"
    )


def png_and_words(fig: Picture) -> tuple[bytes, str]:
    """What a rendering keeps of a Picture: its PNG and its words (its repr)."""
    return fig.png(), repr(fig)


def kept_rendering(key: str) -> Rendering | None:
    """The rendering kept under ``key``, None when there is none (the page draws it then)."""
    folder = renderings_dir()
    try:
        return Rendering((folder / f"{key}.png").read_bytes(), (folder / f"{key}.txt").read_text("utf-8"))
    except OSError:
        return None


def keep_rendering(key: str, data: bytes, text: str) -> Path:
    """Write a rendering under ``key`` (``tools/keep_renderings.py``); returns the PNG's path."""
    folder = renderings_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.txt").write_text(text, "utf-8")
    path = folder / f"{key}.png"
    path.write_bytes(data)
    return path


#: every figure function whose page drawing is kept with the evidence (``rendered``), for the tool and its test
RENDERED: list[Any] = []


def rendered(build: _F | None = None, *, reads: Callable[[], Iterable[Path]] | None = None) -> Any:
    """``kept``, and its page drawing (the call with its default arguments, as a lesson's page
    makes it) kept with the evidence as well: a lesson's figure of its own models, no recording,
    that cost a cold page 0.2-1.4 s each (matplotlib's import and drawing; issue 28). The key holds
    the function's name and the source of its lesson package and of ``course/picture.py``, and,
    for a figure drawn from recordings too, the files ``reads()`` names (their bytes: record again
    and the key changes); a call with other arguments, or one whose key has no rendering, draws
    the Picture here as before. ``<function>.drawing()`` draws the page call here in any case
    (what the tool keeps)."""
    if build is None:
        return functools.partial(rendered, reads=reads)
    drawn = kept(build, depends_on=(lambda *a, **k: file_stamps(reads())) if reads is not None else None)
    package = Path(inspect.getsourcefile(build) or "").parent
    signature = inspect.signature(build)
    page_call = signature.bind()
    page_call.apply_defaults()

    def key() -> str:
        code = [*sorted(package.glob("*.py")), Path(__file__).with_name("picture.py")]
        inputs = list(reads()) if reads is not None else []
        return rendering_key(f"figure-{build.__module__}.{build.__qualname__}", code, inputs)

    def drawing() -> tuple[bytes, str]:
        return png_and_words(build())

    def is_page_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        try:
            call = signature.bind(*args, **kwargs)
        except TypeError:
            return False
        call.apply_defaults()
        return call.arguments == page_call.arguments

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if is_page_call(args, kwargs):
            found = kept_rendering(key())
            if found is not None:
                return found
        return drawn(*args, **kwargs)

    wrapper.rendering_key = key  # type: ignore[attr-defined]
    wrapper.drawing = drawing  # type: ignore[attr-defined]
    RENDERED.append(wrapper)
    return wrapper
