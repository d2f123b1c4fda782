"""What ptxas says about a kernel: registers, spills, shared memory, and its coded messages.

ptxas (the PTX assembler NVRTC runs last) reports per kernel how many
registers each thread uses, how many bytes it spills to local memory, its
static shared memory, and how many of the CTA's 16 named barriers it
reserves (every id the code names, all 16 when an id is in a register). About wgmma it prints numbered ``ptxas info``
lines (not warnings): ``(C7511) Potential Performance Loss: wgmma.mma_async
instructions are serialized ...`` when it had to serialize them (the
pipeline loses its overlap, with no error), and ``(C7519) warpgroup.arrive
is injected`` / ``(C7517) warpgroup.wait is injected`` when it inserted
waits of its own around them. Each of these three was seen in a real
NVRTC 12.9 build of a changed ladder kernel (the tests hold the parser to
those lines). A page shows this report for its kernel, built without a
GPU, and the tests hold each lesson to what its page says about it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .._html import escape, pre
from ..errors import CourseError
from ..lesson import Lesson
from .compile import compile_offline

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")
_CODED = re.compile(r"ptxas\s+(?:info|warning)\s*:\s*\(C\d{4}\)", re.IGNORECASE)
_SERIALIZED = "instructions are serialized"  # ptxas's words in its C7511 (and related) messages
_INJECTED = "is injected"  # C7517 warpgroup.wait, C7519 warpgroup.arrive


@dataclass(frozen=True)
class PtxasReport:
    kernel: str
    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    smem_bytes: int
    warnings: tuple[str, ...]  # ptxas's warnings and numbered (Cnnnn) info lines, whole, in its words
    defines: tuple[tuple[str, str], ...] = ()
    # The named barriers (bar.sync, bar.arrive: 16 a CTA) ptxas reserves for the kernel: every id it
    # uses, or all 16 when an id is in a register; 0 when its report does not say.
    barriers: int = 0

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)

    @property
    def serialized_wgmma(self) -> bool:
        return any(_SERIALIZED in w for w in self.warnings)

    @property
    def injected_waits(self) -> bool:
        """ptxas inserted warpgroup.arrive / warpgroup.wait of its own (C7519, C7517)."""
        return any(_INJECTED in w for w in self.warnings)

    def summary(self) -> str:
        spill = (
            f"{self.spill_stores} bytes spill stores, {self.spill_loads} bytes spill loads"
            if self.spills
            else "no spills"
        )
        if self.serialized_wgmma:
            wgmma = "wgmma serialized by ptxas"
        elif self.injected_waits:
            wgmma = "ptxas injected warpgroup waits"
        else:
            wgmma = "no wgmma serialization"
        return f"{self.kernel}: {self.registers} registers per thread, {spill}, {wgmma}"

    def _repr_html_(self) -> str:
        built = ", ".join(f"-D{k}={v}" for k, v in self.defines)
        rows = [
            ("registers per thread", str(self.registers)),
            ("spill stores / loads (bytes)", f"{self.spill_stores} / {self.spill_loads}"),
            ("stack frame (bytes)", str(self.stack_frame)),
            ("static shared memory (bytes)", str(self.smem_bytes)),
        ]
        if self.barriers:
            rows.append(("named barriers reserved", str(self.barriers)))
        cell = "text-align:left;padding:2px 8px"
        body = "".join(
            f"<tr><td style='{cell}'>{escape(a)}</td><td style='{cell}'>{escape(b)}</td></tr>"
            for a, b in rows
        )
        warnings = (
            "<p>ptxas said:</p>" + pre("\n".join(self.warnings))
            if self.warnings
            else "<p>No ptxas warnings and no numbered ptxas messages.</p>"
        )
        return (
            f"<p><b>ptxas report</b> for <code>{escape(self.kernel)}</code>"
            f"{' built with ' + escape(built) if built else ''}: {escape(self.summary())}</p>"
            f"<table>{body}</table>{warnings}"
        )

    def __str__(self) -> str:
        return self.summary() + "".join(f"\n  {w}" for w in self.warnings)


def parse(log: str, kernel: str) -> PtxasReport:
    """The report for ``kernel`` out of an NVRTC log compiled with ``--ptxas-options=-v``."""
    section, inside = [], False
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            inside = m.group(1) == kernel
        if inside or ("ptxas" in line and "warning" in line.lower()):
            section.append(line)
    text = "\n".join(section)
    frame = _FRAME.search(text)
    used = _USED.search(text)
    if frame is None or used is None:
        raise CourseError(f"no ptxas report for {kernel!r} in the compile log (was -v passed?)")
    warnings = tuple(
        line.strip()
        for line in log.splitlines()
        if _CODED.search(line) or ("ptxas" in line and "warning" in line.lower())
    )
    return PtxasReport(
        kernel=kernel,
        registers=int(used.group(1)),
        spill_stores=int(frame.group(2)),
        spill_loads=int(frame.group(3)),
        stack_frame=int(frame.group(1)),
        smem_bytes=int(used.group(3) or 0),
        warnings=warnings,
        barriers=int(used.group(2) or 0),
    )


def report(lesson: Lesson, defines: Mapping[str, int | str] | None = None) -> PtxasReport:
    """Build the lesson's kernel without a GPU and read ptxas's report."""
    built = compile_offline(lesson, defines=defines, ptxas_verbose=True)
    result = parse(built.log, lesson.kernel_name)
    return PtxasReport(
        **{**result.__dict__, "defines": tuple((k, str(v)) for k, v in sorted((defines or {}).items()))}
    )
