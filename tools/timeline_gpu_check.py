"""Honesty checks of the in-kernel timeline (course/timeline.py) on a real Hopper GPU.

Run from the repo root on the GPU machine (the GPU is required; about a minute):

    COURSE_REQUIRE_GPU=1 PYTHONPATH=$PWD python3 tools/timeline_gpu_check.py [LESSON ...] [--n 4096] [--out DIR]

For every lesson whose kernel carries the timeline stamps (default: all of
them), at N = 4096:

  1. overhead: the kernel built with -DCOURSE_TIMELINE (and recording) against
     the plain build, both checked first, then CUDA events, median of 20
     interleaved batches on inputs rotated past L2 (course.bench's Timer):
     the ratio must be within 10%;
  2. span: the first start to the last end stamped by ALL CTAs' elected
     threads, against CUDA events around the same launch (behind a GPU-side
     hold): within 10%. The recorded CTAs' own span is printed beside it; it
     covers those CTAs only;
  3. split (lessons whose benchmark has "loads only" and "wgmma only" variants,
     i.e. Day 78): the timeline's share of the producer's time spent loading
     against the variant "loads only" time over the kernel's time, measured
     in the same interleaved batches: within 10 percentage points. The wgmma
     shares are printed beside each other with their ratio (not a pass/fail:
     the "wgmma only" variant runs every resident CTA's wgmma at once, the
     timeline times one consumer's issue-to-wait);
  4. %globaltimer resolution: the smallest nonzero difference between
     consecutive reads of one thread in a tight loop, and the SM clock rate
     the same loop saw.

Writes <lesson>.json and <lesson>.png per lesson and checks.json (every
figure above, with provenance) to DIR (default evidence/<this GPU's model>/timeline/). Exit 0
when every check passes, 1 when one fails, 2 when this machine cannot run it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("PYTHONUNBUFFERED", "1")

from course import timeline as tl  # noqa: E402
from course.bench.spec import bench_spec
from course.cli.timeline import instrumented_lessons
from course.errors import CourseError  # noqa: E402
from course.kernel import gate  # noqa: E402
from course.kernel.evidence import device_key  # noqa: E402
from course.kernel.provenance import Provenance  # noqa: E402
from course.lessons import LESSONS, get_lesson  # noqa: E402

TOLERANCE = 0.10  # checks 1 and 2: relative; check 3: percentage points / 100
REPEATS = 20
SPLIT_VARIANTS = ("loads only", "wgmma only")


def variants_of(lesson):
    """The lesson's benchmark variants that split loads from wgmma, or None."""
    if not lesson.has_module("bench"):
        return None
    found = getattr(lesson.module("bench"), "VARIANTS", None)
    if not found or not all(name in found for name in SPLIT_VARIANTS):
        return None
    return found


def variant_sources(lesson, variants):
    from course.kernel.variants import variant_source

    text = lesson.kernel_path.read_text(encoding="utf-8")
    return {name: variant_source(text, variants, name, lesson.kernel_path) for name in SPLIT_VARIANTS}


def plan(lessons):
    """Per kernel file, the lesson that gets the timed checks (the first with a benchmark); the
    others sharing that kernel only get their own recorded timeline (their pages show it)."""
    timed, record_only, seen = [], [], set()
    for lesson in lessons:
        if lesson.kernel_file not in seen and bench_spec(lesson) is not None:
            seen.add(lesson.kernel_file)
            timed.append(lesson)
    for lesson in lessons:
        if lesson not in timed:
            record_only.append(lesson)
    return timed, record_only


def record_only(lesson, n, out_dir, command):
    timeline = tl.record(lesson, n, progress=lambda _line: None, command=command)
    json_path, png_path = tl.write(timeline, out_dir)
    print(
        f"{lesson.id}: recorded ({lesson.kernel_file} is timed under another lesson); wrote {json_path}",
        flush=True,
    )
    return {
        "lesson": lesson.id,
        "kernel": lesson.kernel_file,
        "n": n,
        "recorded_only": True,
        "files": [str(json_path), str(png_path)],
        "clock": timeline.clock.describe(),
        "passed": True,
    }


def prefetch(lessons, n):
    """Compile every build the checks need, in parallel threads (NVRTC drops the GIL); CuPy caches them."""
    import cupy

    from course.kernel.compile import compile_lesson

    jobs = []
    for lesson in {lesson.kernel_file: lesson for lesson in lessons}.values():
        jobs.append((lesson, {lesson.size_macro: n}, None))
        jobs.append((lesson, {lesson.size_macro: n, tl.DEFINE: 1}, None))
        variants = variants_of(lesson)
        if variants:
            for source in variant_sources(lesson, variants).values():
                jobs.append((lesson, {lesson.size_macro: n}, source))

    def build(job):
        cupy.cuda.Device(0).use()
        lesson, defines, source = job
        return compile_lesson(lesson, defines=defines, source=source).seconds

    t0 = time.perf_counter()
    with ThreadPoolExecutor(min(16, len(jobs))) as pool:
        list(pool.map(build, jobs))
    print(f"compiled {len(jobs)} builds in {time.perf_counter() - t0:.1f} s (parallel)", flush=True)


def check_lesson(lesson, n, out_dir, command):
    from course.kernel.compile import compile_lesson

    t0 = time.perf_counter()
    result = {"lesson": lesson.id, "kernel": lesson.kernel_file, "n": n}
    variants = variants_of(lesson)
    extra = {}
    if variants:
        for name, source in variant_sources(lesson, variants).items():
            extra[name] = compile_lesson(lesson, defines={lesson.size_macro: n}, source=source)
    overhead, medians = tl.measure_overhead(lesson, n, REPEATS, extra=extra, progress=lambda _line: None)
    ok1 = abs(overhead.ratio - 1.0) <= TOLERANCE
    result["overhead"] = {
        "plain_ms": overhead.plain_ms,
        "timeline_ms": overhead.timeline_ms,
        "ratio": overhead.ratio,
        "repeats": REPEATS,
        "passed": ok1,
    }
    timeline = tl.record(lesson, n, progress=lambda _line: None, command=command)
    json_path, png_path = tl.write(timeline, out_dir)
    summary = tl.summarize(timeline)
    span_ms = timeline.span.ns / 1e6
    launch_ms = timeline.launch_ms or float("nan")
    ok2 = abs(span_ms - launch_ms) / launch_ms <= TOLERANCE
    result["span"] = {
        "all_ctas_ms": span_ms,
        "cuda_events_ms": launch_ms,
        "ratio": span_ms / launch_ms,
        "median_instrumented_ms": overhead.timeline_ms,
        "recorded_ctas": list(timeline.recorded_ctas),
        "recorded_ctas_ms": timeline.recorded_ns / 1e6,
        "grid_ctas": timeline.grid_ctas,
        "passed": ok2,
    }
    result["clock"] = timeline.clock.describe()
    result["rows"] = [
        {
            "cta": r.cta,
            "warpgroup": r.warpgroup,
            "smid": r.smid,
            "role": r.role,
            "events": len(r.events),
            "full": r.full,
            "clock_fit": r.clock_fit,
        }
        for r in timeline.rows
    ]
    result["shares"] = {
        "load": summary.load_share(),
        "wgmma": summary.wgmma_share(),
        "overlap": summary.overlap_share(),
    }
    result["files"] = [str(json_path), str(png_path)]
    passed = ok1 and ok2
    line = (
        f"{lesson.id}: overhead {overhead.timeline_ms:.4g} / {overhead.plain_ms:.4g} ms = {overhead.ratio:.3f}x "
        f"[{'ok' if ok1 else 'FAIL'}]; span of all CTAs {span_ms * 1e3:,.1f} us vs CUDA events "
        f"{launch_ms * 1e3:,.1f} us = {span_ms / launch_ms:.3f} [{'ok' if ok2 else 'FAIL'}] (recorded CTAs "
        f"{timeline.recorded_ns / 1e3:,.1f} us)"
    )
    if variants:
        kernel = medians["plain"]
        v_load, v_mma = medians["loads only"] / kernel, medians["wgmma only"] / kernel
        t_load, t_mma = summary.load_share(), summary.wgmma_share()
        ok3 = t_load is not None and abs(t_load - v_load) <= TOLERANCE
        result["split"] = {
            "kernel_ms": kernel,
            "loads_only_ms": medians["loads only"],
            "wgmma_only_ms": medians["wgmma only"],
            "variant_load_share": v_load,
            "timeline_load_share": t_load,
            "load_difference_points": None if t_load is None else 100 * (t_load - v_load),
            "variant_wgmma_share": v_mma,
            "timeline_wgmma_share": t_mma,
            "wgmma_ratio": None if not t_mma else t_mma / v_mma,
            "passed": ok3,
            "note": "load shares must agree within 10 points; the wgmma shares are compared, not checked: the "
            "variant runs every resident CTA's wgmma at once, the timeline times one consumer's issue-to-wait",
        }
        passed = passed and ok3
        line += (
            f"; split: loads {100 * (t_load or 0):.1f}% (timeline) vs {100 * v_load:.1f}% (variant) "
            f"[{'ok' if ok3 else 'FAIL'}], wgmma {100 * (t_mma or 0):.1f}% vs {100 * v_mma:.1f}%"
        )
    result["passed"] = passed
    result["seconds"] = time.perf_counter() - t0
    print(line + f" ({result['seconds']:.1f} s)", flush=True)
    print("   " + timeline.clock.describe(), flush=True)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons to check (default: every instrumented one)")
    parser.add_argument("--n", type=int, default=tl.DEFAULT_N)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the files (default: evidence/<this GPU's model>/timeline/)",
    )
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    ids = args.lessons or instrumented_lessons()
    unknown = [i for i in ids if i not in LESSONS]
    if unknown:
        print(f"no lesson(s) {unknown}; the lessons: {', '.join(LESSONS)}")
        return 2
    lessons = [get_lesson(i) for i in ids]
    machine = gate.probe()
    for lesson in lessons:
        v = gate.verdict(lesson, machine)
        if not v.runs:
            print(f"{lesson.id}: cannot run here. {v.message()}")
            return 2
    out_dir = args.out or tl.timeline_dir(device_key(machine.gpu.name) if machine.gpu else None)
    command = "tools/timeline_gpu_check.py" + (f" --n {args.n}" if args.n != tl.DEFAULT_N else "")
    provenance = Provenance.of(machine, command)
    print(f"{provenance.summary()}; N = {args.n}; writing to {out_dir}", flush=True)
    try:
        prefetch(lessons, args.n)
        resolution = tl.globaltimer_resolution()
        print(
            f"%globaltimer: smallest step {resolution.min_step_ns} ns, mean step {resolution.mean_step_ns:.1f} ns "
            f"over {resolution.changes} changes in {resolution.reads} reads; SM clock in that loop "
            f"{resolution.ghz:.3f} GHz",
            flush=True,
        )
        timed, others = plan(lessons)
        results = [check_lesson(lesson, args.n, out_dir, command) for lesson in timed]
        results += [record_only(lesson, args.n, out_dir, command) for lesson in others]
    except CourseError as e:
        print(f"error: {e}")
        return 1
    passed = all(r["passed"] for r in results) and resolution.changes > 0
    report = {
        **provenance.fields(),
        "n": args.n,
        "tolerance": TOLERANCE,
        "globaltimer": {
            "min_step_ns": resolution.min_step_ns,
            "mean_step_ns": resolution.mean_step_ns,
            "changes": resolution.changes,
            "reads": resolution.reads,
            "sm_clock_ghz": resolution.ghz,
        },
        "timeline_clock": "event times: each warpgroup's %globaltimer (one clock for all SMs, so rows line up), "
        "refined by clock64 converted at the rate fitted against %globaltimer where that fit holds; each "
        "lesson's 'clock' says which its rows used (course/timeline/)",
        "lessons": {r["lesson"]: r for r in results},
        "passed": passed,
        "seconds": time.perf_counter() - t_start,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "checks.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{'PASS' if passed else 'FAIL'}: wrote {out_dir / 'checks.json'} in {report['seconds']:.0f} s")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
