"""Day 85: what each step of the climb bought, in sentences computed from the recorded benchmarks.

The page's prose never quotes a number: every number on it comes from the
recorded evidence (``evidence/<model>/bench/``), so recording the steps again
rewrites the sentences too. ``what_each_step_bought(size)`` reads the same
rows as ``page.climb()`` and says, for each step at that size, its rate,
how it compares with the step before, and its ratio to cuBLAS timed in the
same run; then how far the last step is from cuBLAS and from the datasheet
peak.

Whether a step "was faster" is judged on the ratio to cuBLAS whenever both
steps were timed against the same cuBLAS call: each ratio comes from one
run with the two GEMMs' batches interleaved, so clock and power drift
between the two recordings cancels out of it, and the rate in TFLOP/s does
not (at N = 8192 cuBLAS itself moves between recordings). Where the peers
differ (Day 78's cuBLAS writes FP32, the ladder's FP16), the rates are
compared instead. A change within ``SAME_WITHIN`` either way is reported as
no change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ... import lessons as registry  # the module; its LESSONS are read when a story is told
from ..._html import escape
from ...bench.climb import DATASHEET, DATASHEET_PEAK_TFLOPS, ClimbRow, recorded_climb
from ...bench.result import Measurement, SizeRow
from . import LESSON

SAME_WITHIN = 0.02  # a change of at most 2% either way is reported as "no faster", not as a gain or a loss

FASTER, SAME, SLOWER, FIRST = "faster", "no faster", "slower", "first"


def format_rate(tflops: float) -> str:
    """A rate as every sentence writes it: whole TFLOP/s with thousands separators."""
    return f"{tflops:,.0f} TFLOP/s"


def format_ratio(ratio: float) -> str:
    """A ratio as every sentence writes it: two decimals and an x."""
    return f"{ratio:.2f}x"


@dataclass(frozen=True)
class StepSentence:
    """One step at one size: the numbers the sentence was made from, and the sentence."""

    day: int
    title: str
    kernel_file: str
    rate: float  # TFLOP/s
    cublas: Measurement | None  # the same run's cuBLAS (the first peer), if any
    gain: float | None  # rate over the step before's rate; None for the first step at this size
    ratio_gain: float | None  # ratio to cuBLAS over the step before's, when both used the same cuBLAS call
    verdict: str  # FASTER, SAME, SLOWER or FIRST
    text: str

    @property
    def not_faster(self) -> bool:
        """True when the step did not improve on the step before at this size."""
        return self.verdict in (SAME, SLOWER)


@dataclass(frozen=True)
class Story:
    """What each step bought at one size, and the distance left; HTML in a notebook, text elsewhere."""

    size: int
    steps: tuple[StepSentence, ...]
    closing: tuple[str, ...]
    source: str  # where the numbers come from

    def _repr_html_(self) -> str:
        items = []
        for s in self.steps:
            mark = ""
            if s.not_faster:
                label = "slower" if s.verdict == SLOWER else "not faster"
                mark = f"<b style='color:#9a6700'>{label}:</b> "
            items.append(f"<li>{mark}{escape(s.text)}</li>")
        closing = "".join(f"<p>{escape(line)}</p>" for line in self.closing)
        return (
            f"<p><b>What each step bought at N = {self.size}</b> ({escape(self.source)}):</p>"
            f"<ul>{''.join(items)}</ul>{closing}"
        )

    def __str__(self) -> str:
        head = f"What each step bought at N = {self.size} ({self.source}):"
        return "\n".join([head, *(f"- {s.text}" for s in self.steps), *self.closing])

    __repr__ = __str__


def _at(row: ClimbRow, size: int) -> SizeRow | None:
    return next((x for x in row.result.rows if x.size == size), None)


def _judge(change: float) -> str:
    if change > 1 + SAME_WITHIN:
        return FASTER
    if change < 1 - SAME_WITHIN:
        return SLOWER
    return SAME


def _sentence(row: ClimbRow, at: SizeRow, before: tuple[ClimbRow, SizeRow] | None) -> StepSentence:
    lesson = row.lesson
    rate = at.kernel.rate
    peer = at.peers[0] if at.peers else None
    text = f"Day {lesson.day}, {lesson.title} ({lesson.kernel_file}): {format_rate(rate)}"
    if peer is not None and peer.ratio is not None:
        text += f", {format_ratio(peer.ratio)} cuBLAS ({format_rate(peer.rate)} in the same run)"
    text += "."
    gain = ratio_gain = None
    if before is None:
        verdict = FIRST
        text += " The first kernel recorded at this size: the starting point."
    else:
        prev_row, prev = before
        day = prev_row.lesson.day
        gain = rate / prev.kernel.rate
        prev_peer = prev.peers[0] if prev.peers else None
        if (
            peer is not None
            and prev_peer is not None
            and peer.name == prev_peer.name
            and peer.ratio is not None
            and prev_peer.ratio is not None
        ):
            ratio_gain = peer.ratio / prev_peer.ratio
            verdict = _judge(ratio_gain)
            text += (
                f" Against Day {day}: {format_ratio(gain)} the rate, {format_ratio(ratio_gain)} the ratio "
                f"to cuBLAS (Day {day}: {format_ratio(prev_peer.ratio)})."
            )
            if verdict == SAME and _judge(gain) != SAME:
                text += (
                    f" Not faster than Day {day} at this size: the ratio to cuBLAS changed by less than "
                    f"{SAME_WITHIN:.0%}. The rate moved more, and so did cuBLAS between the two recordings "
                    f"({format_rate(prev_peer.rate)} then, {format_rate(peer.rate)} now)."
                )
            elif verdict == SAME:
                text += (
                    f" Not faster than Day {day} at this size: the ratio to cuBLAS changed by less than "
                    f"{SAME_WITHIN:.0%}."
                )
            elif verdict == SLOWER:
                text += f" Slower than Day {day} at this size, against cuBLAS in its own run too."
        else:
            verdict = _judge(gain)
            theirs = prev_peer.name if prev_peer is not None else "no cuBLAS"
            ours = peer.name if peer is not None else "no cuBLAS"
            text += (
                f" Against Day {day}: {format_ratio(gain)} the rate (Day {day} was timed against {theirs}, "
                f"this step against {ours}: the rates are compared, not the ratios)."
            )
            if verdict == SAME:
                text += f" Not faster than Day {day} at this size: the rate changed by less than {SAME_WITHIN:.0%}."
            elif verdict == SLOWER:
                text += f" Slower than Day {day} at this size."
    return StepSentence(
        lesson.day, lesson.title, lesson.kernel_file, rate, peer, gain, ratio_gain, verdict, text
    )


def _closing(steps: Sequence[StepSentence], size: int) -> tuple[str, ...]:
    if not steps:
        return ()
    first, last = steps[0], steps[-1]
    lines = []
    if len(steps) > 1:
        lines.append(
            f"From Day {first.day} to Day {last.day} at N = {size}: {format_rate(first.rate)} to "
            f"{format_rate(last.rate)}, {format_ratio(last.rate / first.rate)}."
        )
    peer = last.cublas
    if peer is not None and peer.ratio is not None:
        gap = peer.rate - last.rate
        if gap > 0:
            said = f"{format_rate(gap)} below it ({format_rate(peer.rate)} in the same run)"
        else:
            said = f"{format_rate(-gap)} above it ({format_rate(peer.rate)} in the same run)"
        lines.append(f"Left to cuBLAS: Day {last.day} runs at {format_ratio(peer.ratio)} cuBLAS, {said}.")
    peak = DATASHEET_PEAK_TFLOPS
    line = (
        f"Left to the datasheet peak of {peak:,.1f} TFLOP/s ({DATASHEET}): Day {last.day} reaches "
        f"{last.rate / peak:.0%} of it, {format_rate(peak - last.rate)} below"
    )
    if peer is not None:
        line += f"; cuBLAS reaches {peer.rate / peak:.0%} of it"
    lines.append(line + ".")
    return tuple(lines)


def what_each_step_bought(size: int = 4096, rows: Sequence[ClimbRow] | None = None) -> Story:
    """The climb at N = ``size`` in sentences: each step's rate, its change and its ratio to cuBLAS.

    ``rows`` default to the recorded climb up to this lesson (the rows
    ``page.climb()`` shows); a step not measured at ``size`` is left out,
    and the step before a step is the previous one that was.
    """
    rows = recorded_climb(LESSON, registry.LESSONS.values()) if rows is None else rows
    steps: list[StepSentence] = []
    before: tuple[ClimbRow, SizeRow] | None = None
    for row in rows:
        at = _at(row, size)
        if at is None:
            continue
        steps.append(_sentence(row, at, before))
        before = (row, at)
    if rows:
        r = rows[0].result
        source = f"recorded on {r.device}, {r.recorded_at[:10]}"
    else:
        source = "nothing recorded yet"
    return Story(size, tuple(steps), _closing(steps, size), source)


__all__ = ["SAME_WITHIN", "Story", "StepSentence", "format_rate", "format_ratio", "what_each_step_bought"]
