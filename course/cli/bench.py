"""``python -m course bench``: time lesson kernels beside their peers on this GPU.

Writes ``<lesson>.json`` and ``<lesson>.png`` per lesson (default folder
``evidence/<this GPU's model>/bench/``, ``course.bench.result.bench_dir``) and prints a table.

Exit status: 0 when every lesson was measured, 1 when a kernel or a peer
computed a wrong result (nothing is timed or written for that lesson), 2 when this machine cannot run a lesson
(after saying why) or the arguments are wrong.

``--recorded`` prints what is already recorded for every GPU model in
``evidence/<model>/bench/`` (or in ``--out``), a table, or with ``--json`` a list of
objects, with no GPU: each lesson's sizes on each GPU, one after the other.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import bench
from .._table import text_table
from ..bench.spec import bench_spec
from ..errors import CheckFailed, CourseError
from ..kernel import evidence, gate, nvtx
from ..lessons import LESSONS, get_lesson


def _timed() -> list[str]:
    return [lesson_id for lesson_id, lesson in LESSONS.items() if bench_spec(lesson) is not None]


def register(sub: argparse._SubParsersAction) -> None:
    timed = _timed()
    p = sub.add_parser(
        "bench",
        help="time lesson kernels against their peers on this GPU; write <lesson>.json and .png",
    )
    p.add_argument(
        "lessons",
        nargs="*",
        choices=timed + [[]],
        metavar="LESSON",
        help=f"lessons to time: {', '.join(timed)} (default: all)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for <lesson>.json and <lesson>.png (default: evidence/<this GPU's model>/bench/)",
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="matrix sizes, multiples of 64 (default: each lesson's own list)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=bench.DEFAULT_REPEATS,
        help=f"timed repeats per measurement, at least {bench.MIN_REPEATS} (default: {bench.DEFAULT_REPEATS})",
    )
    p.add_argument(
        "--recorded",
        action="store_true",
        help="print the recorded benchmark evidence of the lessons instead of measuring (no GPU needed)",
    )
    p.add_argument(
        "--json", action="store_true", help="with --recorded: a JSON list, one object per lesson and size"
    )
    p.set_defaults(func=run)


def _folders(directory: Path | None) -> list[Path]:
    """The folders ``--recorded`` reads: ``directory``, else every recorded GPU model's."""
    return [directory] if directory is not None else [bench.bench_dir(k) for k in evidence.recorded_keys()]


def recorded_rows(lesson_ids: list[str], directory: Path | None = None) -> list[dict[str, object]]:
    """One object per lesson, GPU, size and peer from the recorded evidence: the kernel's rate and
    that peer's (a size timed with no peer gives one object with no peer)."""
    out: list[dict[str, object]] = []
    results = [
        (lesson_id, bench.load(lesson_id, folder))
        for lesson_id in lesson_ids
        for folder in _folders(directory)
    ]
    for lesson_id, result in results:
        if result is None:
            continue
        # A peer whose ratio would pair unlike things (Day 87: cuBLASLt's default promotes its FP8
        # accumulator, the kernel's default build does not) gets its rate and no ratio, as on the page.
        spec = bench_spec(get_lesson(lesson_id))
        unlike = set(spec.unlike) if spec is not None else set()
        for row in result.rows:
            for peer in row.peers or (None,):
                out.append(
                    {
                        "lesson": lesson_id,
                        "n": row.size,
                        "kernel": round(row.kernel.rate, 3),
                        "peer": peer.name if peer else None,
                        "peer_rate": round(peer.rate, 3) if peer else None,
                        "ratio": (
                            round(peer.ratio, 4)
                            if peer and peer.ratio is not None and peer.name not in unlike
                            else None
                        ),
                        "unit": result.unit,
                        "device": result.device,
                        "recorded_at": result.recorded_at,
                    }
                )
    return out


def _print_recorded(lesson_ids: list[str], directory: Path | None, as_json: bool) -> int:
    rows = recorded_rows(lesson_ids, directory)
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    missing = [
        f"{lesson_id}: no recorded benchmark in {folder}"
        for lesson_id in lesson_ids
        for folder in _folders(directory)
        if bench.load(lesson_id, folder) is None
    ]
    header = ["lesson", "N", "kernel", "peer", "peer rate", "kernel/peer", "unit", "device", "recorded"]
    # a size's second and later peers: lesson, N and the kernel's rate only on its first line
    again = [
        i > 0
        and (r["lesson"], r["n"], r["device"])
        == (rows[i - 1]["lesson"], rows[i - 1]["n"], rows[i - 1]["device"])
        for i, r in enumerate(rows)
    ]
    cells = [
        [
            "" if repeat else str(r["lesson"]),
            "" if repeat else str(r["n"]),
            "" if repeat else f"{r['kernel']:,.1f}",
            str(r["peer"] or ""),
            f"{r['peer_rate']:,.1f}" if r["peer_rate"] is not None else "",
            f"{r['ratio']:.3f}x" if r["ratio"] is not None else "",
            str(r["unit"]),
            str(r["device"]),
            str(r["recorded_at"])[:10],
        ]
        for r, repeat in zip(rows, again, strict=True)
    ]
    print(text_table(header, cells, align="right"))
    for line in missing:
        print(line)
    return 0


def run(args: argparse.Namespace) -> int:
    lesson_ids = list(args.lessons) or _timed()
    if args.json and not args.recorded:
        raise CourseError(
            "--json goes with --recorded (a measurement prints its table and writes JSON files)"
        )
    if args.recorded:
        return _print_recorded(lesson_ids, args.out, args.json)
    # Argument errors first, before any GPU work: CourseError, exit 2.
    bench.validate_repeats(args.repeats)
    for lesson_id in lesson_ids:
        if args.sizes is not None:
            bench.spec_of(get_lesson(lesson_id)).validate_sizes(lesson_id, args.sizes)
    machine = gate.probe()
    status = 0
    for lesson_id in lesson_ids:
        lesson = get_lesson(lesson_id)
        v = gate.verdict(lesson, machine)
        if not v.runs:
            print(f"{lesson_id}: not timed, nothing written. {v.message()}")
            status = max(status, 2)
            continue
        command = "python -m course bench " + lesson_id
        if args.sizes is not None:
            command += " --sizes " + " ".join(map(str, args.sizes))
        if args.repeats != bench.DEFAULT_REPEATS:
            command += f" --repeats {args.repeats}"
        try:
            with nvtx.range(f"{lesson_id} bench"):
                result = bench.measure(
                    lesson,
                    args.sizes,
                    args.repeats,
                    progress=lambda line: print(line, flush=True),
                    command=command,
                )
        except CheckFailed as e:
            print(f"{lesson_id}: wrong result, nothing timed or written. {e}")
            status = max(status, 1)
            continue
        spec = bench.spec_of(get_lesson(lesson_id))
        json_path, png_path = bench.write(result, args.out, spec.size_label)
        print(bench.table(result, spec.unlike))
        print(f"{lesson_id}: wrote {json_path} and {png_path}", flush=True)
    return status
