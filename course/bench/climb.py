"""The climb: every GEMM lesson's recorded rate against N, with cuBLAS, on one plot.

Drawn from the recorded benchmark evidence (``evidence/bench/``) of every
lesson measured in TFLOP/s up to a given day, so each step's page shows
where it stands on the whole ladder, and re-recording redraws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._html import escape
from ..lesson import Lesson
from ..picture import Picture, picture
from .result import BenchResult, load


@dataclass(frozen=True)
class ClimbRow:
    lesson: Lesson
    result: BenchResult


def recorded_climb(upto: Lesson) -> list[ClimbRow]:
    """Every TFLOP/s lesson with a recorded benchmark, up to and including ``upto``'s day."""
    from ..lessons import LESSONS

    out = []
    for lesson in LESSONS.values():
        if lesson.day > upto.day or lesson.bench_spec() is None:
            continue
        result = load(lesson.id)
        if result is not None and result.unit == "TFLOP/s":
            out.append(ClimbRow(lesson, result))
    return out


def climb_figure(upto: Lesson) -> Picture:
    """TFLOP/s against N (log2) for each step so far, solid; each distinct cuBLAS peer, dashed."""
    rows = recorded_climb(upto)
    fig = picture(figsize=(8.0, 4.6))
    ax = fig.add_subplot()
    peers: dict[str, tuple[list[int], list[float]]] = {}
    sizes: set[int] = set()
    for row in rows:
        r = row.result
        ax.plot(
            r.sizes,
            [x.kernel.rate for x in r.rows],
            marker="o",
            linewidth=2.5 if row.lesson.id == upto.id else 1.2,
            label=f"Day {row.lesson.day}: {row.lesson.kernel_file}",
        )
        sizes.update(r.sizes)
        for x in r.rows:
            for p in x.peers:
                xs, ys = peers.setdefault(p.name, ([], []))
                if x.size not in xs:
                    xs.append(x.size)
                    ys.append(p.rate)
    for name, (xs, ys) in peers.items():
        order = sorted(range(len(xs)), key=xs.__getitem__)
        ax.plot([xs[i] for i in order], [ys[i] for i in order], linestyle="--", color="black",
                alpha=0.35 + 0.3 * ("float16" in name), label=name)  # fmt: skip
    if sizes:
        ticks = sorted(sizes)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, labels=[str(s) for s in ticks])
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("N (M = N = K)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"The climb so far, recorded: up to Day {upto.day}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


@dataclass(frozen=True)
class ClimbTable:
    rows: tuple[ClimbRow, ...]
    size: int

    def _repr_html_(self) -> str:
        e = escape
        cell = "text-align:left;padding:2px 8px;white-space:nowrap"
        body = []
        for row in self.rows:
            at = next((x for x in row.result.rows if x.size == self.size), None)
            if at is None:
                continue
            peer = at.peers[0]
            body.append(
                f"<tr><td style='{cell}'>Day {row.lesson.day}</td><td style='{cell}'>{e(row.lesson.title)}</td>"
                f"<td style='{cell}'>{at.kernel.rate:,.0f}</td><td style='{cell}'>{peer.rate:,.0f} "
                f"({e(peer.name)})</td><td style='{cell}'>{peer.ratio:.3f}x</td></tr>"
            )
        head = "".join(
            f"<th style='{cell}'>{h}</th>"
            for h in ("day", "step", "TFLOP/s", "cuBLAS TFLOP/s", "kernel/cuBLAS")
        )
        return f"<p>Recorded at N = {self.size}:</p><table><tr>{head}</tr>{''.join(body)}</table>"


def climb_table(upto: Lesson, size: int = 4096) -> ClimbTable:
    return ClimbTable(tuple(recorded_climb(upto)), size)
