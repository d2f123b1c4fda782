"""What a lesson page calls: one object per page, short cells.

    page = Page("<lesson id>")
    page.status()              # what this machine can do, in words
    page.snippet("<region>")   # highlighted region with its notes
    page.run()                 # compile, run and check, or explain + evidence
    page.speed()               # how fast is it: recorded, and a button to measure here
    page.quiz()                # the quiz (practice mode)

Environment problems and refusals are shown as a short message, never a
traceback. With ``COURSE_REQUIRE_GPU=1`` (the GPU test run) a page that
cannot run, or a check that fails, raises instead, so nbval fails.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

from .._html import pre
from ..errors import CheckFailed, CourseError, EnvironmentProblem
from ..kernel import evidence, gate
from ..kernel.host import host_of, run_lesson
from ..lessons import LESSONS, get_lesson
from ..snippets import get_snippet
from ..view.listing import SnippetView
from ..view.notes import load_notes
from .messages import Message, _display, _install_error_handler
from .messages import show_refusal as show_refusal  # the pages import it from here


def _compile_in_background(lesson: Any) -> Any:
    # A new thread has no current CUDA context until it makes one: use()
    # (cudaSetDevice) makes device 0's primary context current, the one
    # every thread of this process shares, so the module loaded here runs
    # from the notebook's thread.
    import cupy

    # when the page asks: a page loads only what its cells use
    from ..kernel.compile import compile_lesson

    cupy.cuda.Device(0).use()
    return compile_lesson(lesson, defines=lesson.run_defines)


class Page:
    def __init__(self, lesson_id: str):
        self.lesson = get_lesson(lesson_id)
        self._compile_message: Message | None = None
        self._said_not_run = False  # "Not run here" and the compile check: once per page, at its first run
        self._said_status = False  # the status line gave the reason a cell cannot run: runs point to it
        self._prefetch: Future[Any] | None = None
        self._reveals: list[Any] = []  # listings and diffs with an exercise's lines folded
        _install_error_handler()
        if self.verdict().runs:
            # Start the kernel's compile now (seconds with an empty cache:
            # NVRTC over libcu++'s headers). NVRTC runs without the GIL, so it
            # overlaps the cells that render the page before page.run()
            # needs the module; a compile error surfaces there.
            self._prefetch = ThreadPoolExecutor(1, thread_name_prefix="course-compile").submit(
                _compile_in_background, self.lesson
            )

    # -- what this machine can do -----------------------------------------
    def verdict(self) -> gate.Verdict:
        return gate.verdict(self.lesson)

    def status(self) -> Message:
        v = self.verdict()
        shown = evidence.shown().sentence()
        if v.runs:
            msg = Message("ok", f"{v.reason} The cells below compile and run the kernel on it. {shown}")
        elif v.tier == "wrong-gpu":
            msg = Message(
                "warning",
                f"{v.reason} {v.advice} Where a cell would run it, the page shows the output recorded on a real "
                f"Hopper GPU. {shown}",
            )
        else:
            msg = Message(
                "info",
                f"{v.reason} {v.advice} Where a cell would run the kernel, the page shows the output recorded on "
                f"a real Hopper GPU. {shown}",
            )
        if not v.runs and gate.gpu_required():
            raise EnvironmentProblem(
                f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot run {self.lesson.id}: {v.message()}"
            )
        self._said_status = True
        return msg

    # -- the kernel source ------------------------------------------------
    def snippet(self, name: str) -> Any:
        """The region as a listing with its notes; a coding exercise's lines in it stay folded
        (with a button that shows them) until the learner passes that exercise (``course.exercises.reveal``)."""
        snip = get_snippet(self.lesson.kernel_path, name)
        notes = tuple(load_notes(self.lesson).get(name, []))
        folded = [a for a in self._unpassed() if a.first <= snip.end and snip.start <= a.last]
        if not folded:
            return SnippetView(snip, notes)
        return self._reveal_box(lambda hidden: SnippetView(snip, notes, tuple(hidden))._repr_html_(), folded)

    def _unpassed(self) -> tuple[Any, ...]:
        # when the page asks: a page loads only what its cells use
        from ..exercises.reveal import still_hidden

        return still_hidden(self.lesson)

    def _reveal_box(self, render: Callable[[Any], str], folded: list[Any]) -> Any:
        # when the page asks: a page loads only what its cells use
        from ..exercises.reveal import RevealBox

        box = RevealBox(render, folded)
        self._reveals.append(box)
        return box

    def refresh_reveals(self) -> None:
        """Show the folded answers whose exercise the learner has now passed (after a Check)."""
        for box in self._reveals:
            box.refresh(self.lesson)

    def evidence(self, name: str | None = None) -> evidence.Evidence | Message:
        """The recorded run (of the case or suggested experiment ``name``, when given)."""
        ev = evidence.load(self.lesson, evidence.path_of(self.lesson, name))
        if ev is None:
            what = f"the run {name!r} of {self.lesson.id}" if name else self.lesson.id
            return Message(
                "warning",
                f"Not recorded yet: {what} has not been run on a real GPU for this page, so there is no "
                "recorded output to show here.",
            )
        return ev

    def verified(self) -> Message:
        """Which real run verified this kernel, from the evidence file."""
        ev = evidence.load(self.lesson)
        if ev is None or not ev.passed:
            return Message(
                "warning",
                f"No passing run of {self.lesson.id} on real hardware is recorded in this checkout.",
            )
        v = ev.versions
        return Message(
            "ok",
            f"Verified on real hardware: {ev.device} (compute capability {ev.compute_capability}, "
            f"{ev.sm_count} SMs), driver {v.get('driver') or 'version not recorded'} (CUDA {v.get('driver (CUDA)')}), "
            f"CuPy {v.get('cupy')}, NVRTC {v.get('nvrtc')}, cuda-bindings {v.get('cuda-bindings')}, "
            f'on {ev.recorded_at[:10]}: "{ev.output[-1]}"',
        )

    # -- running ----------------------------------------------------------
    def compile_check(self) -> Message:
        """Compile without a GPU (cuda-python's NVRTC) and say what happened; once per page.

        It compiles what a run and ``try_mine`` compile: the kernel at the run's size
        (``Lesson.run_defines``), so an unchanged copy reports the same cubin."""
        if self._compile_message is None:
            # when the page asks: a page loads only what its cells use
            from ..kernel.compile import compile_offline

            try:
                result = compile_offline(self.lesson, defines=self.lesson.run_defines)
            except CourseError as e:
                self._compile_message = Message("warning", "The compile check could not run here.", str(e))
            else:
                self._compile_message = Message("ok", f"Compile check: {result.summary()}.")
        return self._compile_message

    def run(
        self,
        expect_pass: bool = True,
        case: str | None = None,
        *,
        experiment: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the lesson's check on this GPU, or explain why not and show the recording.

        ``case`` names one of the lesson's own runs with other options (the
        options and the outcome it promises come from the lesson's host);
        ``expect_pass=False`` marks any other run whose check is meant to
        fail, where a pass is what would be wrong. (An edit to the kernel's
        source is ``page.try_mine(experiment=...)``; ``experiment=`` here is
        the old name of ``case=``, kept working with a warning.)
        """
        if experiment is not None:
            warnings.warn(
                f"page.run(experiment=...) is now page.run(case=...): page.run(case={experiment!r})",
                FutureWarning,
                stacklevel=2,
            )
            case = case or experiment
        if case is not None:
            planned = host_of(self.lesson).case(case)
            kwargs = {**planned.options, **kwargs}
            expect_pass = planned.expect_pass
        v = self.verdict()
        if not v.runs:
            if gate.gpu_required():
                raise EnvironmentProblem(
                    f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot run {self.lesson.id}: {v.message()}"
                )
            if not self._said_not_run:  # once per page: not under every run cell (issue 38)
                self._said_not_run = True
                # The reason once a page (issue 38): where the status line at the top said it, point there.
                why = "The status line at the top of the page says why." if self._said_status else v.reason
                _display(Message("info" if v.tier == "no-gpu" else "warning", f"Not run here. {why}"))
                _display(self.compile_check())
            return self.evidence(case)
        try:
            if self._prefetch is not None and "compiled" not in kwargs:
                # The background compile serves the first run; later runs
                # compile again (from CuPy's cache unless the kernel changed).
                prefetch, self._prefetch = self._prefetch, None
                kwargs["compiled"] = prefetch.result()
            result = run_lesson(self.lesson, progress=lambda line: _display(Message("info", line)), **kwargs)
        except CourseError as e:
            # A compile error, a refused launch: say so, keep the page going.
            if gate.gpu_required() and expect_pass:
                raise
            return Message("error", f"{type(e).__name__}: {e.message}", e.where, error=e)
        if result.passed == expect_pass:
            kind, text = "ok", result.lines[-1]
        else:
            kind = "error"
            text = (
                result.lines[-1]
                if not result.passed
                else "The check passed, but this run was meant to make it fail."
            )
            if gate.gpu_required():
                raise CheckFailed(text)
        _display(Message(kind, text))
        return result

    # -- how fast is it ---------------------------------------------------
    def speed(self, **kwargs: Any) -> Any:
        """The "How fast is it?" section: recorded figures, and on a GPU that
        runs the lesson a button that measures here with progress shown.

        Measuring compiles the kernel once per size (seconds with an empty
        cache), so it waits for the learner's click instead of slowing down
        Run All. ``kwargs`` go to ``course.bench.speed_section`` (sizes, repeats).
        """
        # when the page asks: a page loads only what its cells use
        from ..bench import speed_section

        recorded = speed_section(self.lesson, measure_here=False, **kwargs)
        if not self.verdict().runs:
            return recorded
        # heavy: ipywidgets, only on a page
        import ipywidgets as w

        shown = w.HTML(recorded._repr_html_())

        def measure(progress: Callable[[str], Any]) -> None:
            shown.value = speed_section(self.lesson, progress=progress, **kwargs)._repr_html_()

        return _gpu_action(
            "Measure on this GPU",
            "measuring: one line per size as it completes ...",
            measure,
            shown,
            name="measure",
        )

    # -- what changed, what ptxas says, where the climb stands -----------
    def changes(self, regions: tuple[str, ...] | None = None) -> Any:
        """The kernel's regions side by side with the previous step's (``Lesson.previous``)."""
        # when the page asks: a page loads only what its cells use
        from ..view.diff import kernel_diff

        if not self.lesson.previous:
            return Message("info", f"{self.lesson.id} does not follow another step of the course.")
        previous = get_lesson(self.lesson.previous)
        shown = kernel_diff(previous, self.lesson, regions)
        in_diff = {
            n
            for r in shown.regions
            if r.changed and r.new is not None
            for n in range(r.new.start, r.new.end + 1)
        }
        folded = [a for a in self._unpassed() if any(n in in_diff for n in range(a.first, a.last + 1))]
        if not folded:
            return shown
        return self._reveal_box(
            lambda hidden: kernel_diff(previous, self.lesson, regions, tuple(hidden))._repr_html_(), folded
        )

    def ptxas(self, **defines: int) -> Any:
        """ptxas's report for the kernel (registers, spills, wgmma serialization), built without a GPU."""
        # when the page asks: a page loads only what its cells use
        from ..kernel.ptxas import report

        if self._prefetch is not None:
            # Let the page's own compile (started by the constructor) finish first, so the two
            # NVRTC compiles do not run at once: on the H200 this cell took 0.54-0.66 s cold beside
            # the running compile (Days 82-84) and 0.09-0.15 s after it had ended (issue 28, s9 logs).
            # A compile error is not this cell's to report: page.run() shows it.
            wait([self._prefetch])
        try:
            return report(self.lesson, defines or None)
        except CourseError as e:
            return Message("warning", "The ptxas report could not be built here.", str(e), error=e)

    def climb(
        self, size: int = 4096, measure: bool = False, chart: bool = True, family: str | None = None
    ) -> Any:
        """The recorded climb so far: the table at ``size`` and a plot of every step against its size.

        ``family`` names another climb than the page's own (``course.bench.climb``: "attention" on
        Day 85, after the GEMM ladder's), drawn up to its last step. ``measure=True`` (the finale)
        adds, on a GPU that runs the lessons, a button that measures every step again here, one
        after the other in this process, and redraws both from that run. ``chart=False`` shows the
        table alone: the plot covers every size, so a second table at another size need not draw
        it again. A climb with no step recorded on the GPU shown is the table's sentence alone,
        naming the steps.
        """
        # when the page asks: a page loads only what its cells use
        from ..bench.climb import (
            climb_figure,
            climb_table,
            climb_upto,
            family_of,
            measure_climb,
            recorded_climb,
            recorded_climb_picture,
            unrecorded_steps,
        )

        lessons = tuple(LESSONS.values())
        upto = climb_upto(self.lesson, lessons, family)
        recorded = recorded_climb(upto, lessons, family)
        climb = family_of(upto, lessons, family)
        recorded_table = climb_table(recorded, size, climb, unrecorded_steps(upto, lessons, family))
        if not chart or not recorded:
            return recorded_table
        v = self.verdict()
        if not (measure and v.runs):
            if measure:
                # The page promises a button; say why there is none here (issue 22, item 17), once:
                # the page's status line at its top gives the reason and whose recordings are shown
                # (issue 38: Day 85 said both twice).
                _display(
                    Message(
                        "info",
                        "No measuring button here: this machine cannot run the lessons (the status at the "
                        "top of the page says why). On a GPU that runs the lessons (compute capability 9.0) "
                        "a button below measures every step again. The table and the plot show the runs "
                        "recorded on a real GPU.",
                    )
                )
            _display(recorded_table)
            return recorded_climb_picture(upto, lessons, family)
        # heavy: ipywidgets, only on a page
        import ipywidgets as w

        table = w.HTML(recorded_table._repr_html_())
        image = w.Image(value=recorded_climb_picture(upto, lessons, family).png(), format="png")

        def measure_all(progress: Callable[[str], Any]) -> None:
            rows = measure_climb(upto, lessons, progress=progress, family=family)
            table.value = climb_table(rows, size, climb)._repr_html_()
            image.value = climb_figure(upto, rows, climb).png()

        return _gpu_action(
            "Measure every step here", "measuring every step, one after the other ...", measure_all, table, image,
            name="measure",
        )  # fmt: skip

    # -- the quiz ---------------------------------------------------------
    def quiz(self, **kwargs: Any) -> Any:
        """The lesson's quiz in practice mode. Submit saves under the learner's
        JupyterHub name, or the login name on a machine of one's own."""
        # when the page asks: a page loads only what its cells use
        from ..quiz import show_quiz

        kwargs.setdefault("learner_id", default_learner_id())
        panel = show_quiz(self.lesson.id, **kwargs)
        # A pass of the coding exercise shows its lines in the quiz's listings too.
        self._reveals.extend(getattr(panel, "reveals", ()))
        return panel

    # -- write a piece yourself (course.exercises.coding) ----------------------------
    def coding(self, exercise: str | None = None) -> Any:
        """The page's coding exercise (``exercise``: its id; default: the first): write a piece
        of the kernel, press Check, and it runs with the lesson's own check on this GPU, or
        against the course's CPU model where no GPU runs the lesson. Your code is kept in your
        workspace between two marker lines, so an edit in JupyterLab's editor shows here too."""
        # when the page asks: a page loads only what its cells use
        from ..exercises.coding import get_exercise, load_coding
        from ..exercises.coding_widget import CodingPanel

        found = load_coding(self.lesson)
        if not found:
            return Message("info", f"{self.lesson.id} has no coding exercise yet.")
        chosen = get_exercise(self.lesson, exercise) if exercise is not None else found[0]
        panel = CodingPanel(self.lesson, chosen)
        # A pass shows the lines this page kept folded (the panel saves the pass to progress first).
        button = getattr(panel, "check_button", None)
        if button is not None:
            button.on_click(lambda _b: self.refresh_reveals())
        return panel

    # -- try your own version (course.tryout.workspace, course.tryout.sandbox) -----------
    def my_copy(self, reset: bool = False) -> Any:
        """Your copy of the lesson's kernel, to edit: where it is (a link that opens it in
        JupyterLab's editor) and what you changed. Made on first use, never overwritten;
        ``reset=True`` starts again from the lesson's kernel, keeping the old copy as a backup."""

        # when the page asks: a page loads only what its cells use
        from ..tryout.workspace import learner_copy

        return replace(learner_copy(self.lesson, reset=reset), hidden=self._hidden_lines())

    def _hidden_lines(self) -> tuple[Any, ...]:
        return tuple(a.hidden() for a in self._unpassed())

    def suggested(self) -> Any:
        """The page's suggested experiments: the change, the outcome the page expects, and what
        the kept GPU run of each came to (or that none is kept yet)."""
        # when the page asks: a page loads only what its cells use
        from ..tryout.suggestions import load_suggestions, recorded_words, suggestions_html

        found = load_suggestions(self.lesson)

        class _Table:
            def _repr_html_(self) -> str:
                return suggestions_html(found)

            def __repr__(self) -> str:
                return "\n".join(
                    f"{s.name}: {s.title} (expected: {s.expect_words}; recorded: {recorded_words(s)})"
                    for s in found
                )

        return _Table()

    def try_mine(
        self,
        experiment: str | None = None,
        timeout_s: float | None = None,
        reset: bool = False,
        original: str = "recorded",
    ) -> Any:
        """Compile, run and check your copy (or a suggested ``experiment``) in a separate
        process with a time limit, and show it beside the lesson's kernel with the diff.

        A fault or a hang ends that process only: this page's GPU context is
        never touched, and ``page.run()`` works right after. On a machine
        that cannot run the lesson, your version is compile-checked instead.
        """
        # when the page asks: a page loads only what its cells use
        from ..tryout.sandbox import DEFAULT_TIMEOUT_S
        from ..tryout.trial import try_kernel

        tried = try_kernel(
            self.lesson,
            experiment=experiment,
            timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
            reset=reset,
            original=original,  # type: ignore[arg-type]  # checked by try_kernel
        )
        if tried.copy.hidden != self._hidden_lines():
            tried = replace(tried, copy=replace(tried.copy, hidden=self._hidden_lines()))
        if gate.gpu_required():
            if tried.result.outcome == "not-run":
                raise EnvironmentProblem(
                    f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot run {self.lesson.id}: "
                    f"{tried.result.headline}"
                )
            if tried.confirmed is False:
                raise CheckFailed(tried.verdict_text())
        return tried

    # -- inside the kernel: the timeline it records (course.timeline) ------
    def timeline(self, n: int | None = None) -> Any:
        """The producer/consumer timeline recorded on a real GPU, and on a GPU that
        runs the lesson a button that records one here (the kernel rebuilt with
        -DCOURSE_TIMELINE, one launch at size ``n``, default 4096, checked)."""
        # when the page asks: a page loads only what its cells use
        from .. import timeline as tl

        if not tl.instrumented(self.lesson):
            return Message("info", f"{self.lesson.kernel_file} records no timeline.")
        v = self.verdict()
        if gate.gpu_required() and not v.runs:
            raise EnvironmentProblem(
                f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot record {self.lesson.id}: {v.message()}"
            )
        try:
            recorded = tl.timeline_section(self.lesson)
        except CourseError as e:
            recorded = tl.TimelineSection(self.lesson.id, None, None, False, f"{type(e).__name__}: {e}")
        if not v.runs:
            return recorded
        # heavy: ipywidgets, only on a page
        import ipywidgets as w

        size = tl.DEFAULT_N if n is None else n
        shown = w.HTML(recorded._repr_html_())

        def record(progress: Callable[[str], Any]) -> None:
            timeline = tl.record(
                self.lesson, size, progress=progress, command=f"page.timeline() ({self.lesson.id})"
            )
            device = timeline.provenance.device if timeline.provenance else "this GPU"
            shown.value = tl.section_of(timeline, f"Recorded here, just now, on {device}.")._repr_html_()

        return _gpu_action(
            "Record on this GPU",
            f"recording {self.lesson.id} at N = {size} ...",
            record,
            shown,
            name="record",
        )


def _gpu_action(
    label: str, first_line: str, work: Callable[[Callable[[str], None]], None], *shown: Any, name: str
) -> Any:
    """A button that runs ``work(progress)`` on this GPU when clicked (seconds of compiles stay out
    of Run All), its progress lines shown as they come, a CourseError shown as a message (and raised
    again under COURSE_REQUIRE_GPU). ``box.<name>()`` does the same without a frontend (tests)."""
    # heavy: ipywidgets, only on a page
    import ipywidgets as w

    # when the page asks: a page loads only what its cells use
    from .._live import LiveBox

    button = w.Button(description=label, icon="play", button_style="primary", layout=w.Layout(width="auto"))
    status = w.HTML()
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        status.value = pre("\n".join(lines[-12:]))

    def run(_: Any = None) -> None:
        button.disabled = True
        lines.clear()
        progress(first_line)
        try:
            work(progress)
        except CourseError as e:
            status.value = Message("error", f"{type(e).__name__}: {e.message}", e.where)._repr_html_()
            if gate.gpu_required():
                raise
        finally:
            button.disabled = False

    button.on_click(run)
    box = LiveBox([button, status, *shown])
    setattr(box, name, run)
    return box


def default_learner_id() -> str | None:
    """COURSE_LEARNER, else JUPYTERHUB_USER, else the login name (``course.exercises.progress.login_learner_id``)."""
    # when the page asks: a page loads only what its cells use
    from ..exercises.progress import login_learner_id

    return login_learner_id()
