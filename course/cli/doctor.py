"""``python -m course doctor``: what this machine has, and which lessons run.

Exit status: 0 when the report is complete (a machine without a GPU is a
report, not a failure); 1 when ``--compile`` finds a kernel that does not
compile, or the course material is missing; 2 when ``--compile`` cannot
run here (no CuPy or NVRTC in this Python: the message names the extra to
install).
"""

from __future__ import annotations

import argparse
import sys

from ..kernel import gate
from ..lessons import LESSONS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="print the GPU, driver, CUDA, NVRTC, CuPy and cuda-python versions")
    p.add_argument("--compile", action="store_true", help="also compile-check every kernel without a GPU")
    p.set_defaults(func=run)


def _learner_code() -> None:
    """How learners' code is run here: the C++ compiler of the CPU check, and the sandbox."""
    # when this subcommand runs: python -m course starts without it
    from .._confine import BWRAP_ENV, GET_SANDBOX, sandbox_status
    from ..errors import CourseError
    from ..exercises.coding_check import find_compiler

    print("Learners' code (coding exercises and their grading):")
    print(f"  {'C++ compiler:':<20}{find_compiler() or 'none on PATH: the CPU check cannot run'}")
    try:
        box = sandbox_status()
        state = (
            f"in use for the CPU and GPU children ({box.detail})"
            if box.works
            else f"not in use: {box.detail}"
        )
    except CourseError as e:
        box, state = None, f"refused: {e.message}"
    print(f"  {'bubblewrap:':<20}{state}")
    print(f"  {'found as:':<20}{BWRAP_ENV} (a bwrap binary) if set, else bwrap on PATH")
    if box is None or not box.works:
        print(
            f"  {'quiz grade:':<20}runs no code answer here (each scores 0 and is flagged) unless given --unconfined"
        )
        print(f"  {'to get one:':<20}{GET_SANDBOX}")
    print(f"  {'always:':<20}own process group, limits, throwaway folder, scrubbed environment")


def run(args: argparse.Namespace) -> int:
    machine = gate.probe()
    print("Hopper course doctor")
    if machine.gpu is not None:
        g = machine.gpu
        print(f"  GPU:                {g.name}")
        print(f"  compute capability: {g.cc_str}")
        print(f"  SMs:                {g.sm_count}")
        print(f"  shared memory:      {g.smem_per_block_optin // 1024} KiB per block (opt-in maximum)")
    else:
        print("  GPU:                none usable")
        print(f"  why:                {machine.problem}")
        print(f"  what to do:         {machine.advice}")
    for name, version in machine.versions.items():
        print(f"  {name + ':':<20}{version or 'not found'}")
    # Jupyter may run another Python than the one pip installed into; say which this is.
    print(f"  {'this Python:':<20}{sys.executable}")
    if machine.notes:
        print("CUDA stack:")
        for note in machine.notes:
            print(f"  {note}")
    print("Lessons:")
    for lesson in LESSONS.values():
        v = gate.verdict(lesson, machine)
        state = {"runs": "runs here", "wrong-gpu": "cannot run here", "no-gpu": "cannot run here"}[v.tier]
        print(f"  {lesson.id} ({lesson.title}): {state}")
        if not v.runs and v.tier == "wrong-gpu":
            print(f"    {v.message()}")
    _learner_code()
    if args.compile:
        # when this subcommand runs: python -m course starts without it
        from ..errors import CourseError, EnvironmentProblem
        from ..kernel.compile import compile_offline

        print("Compile check (no GPU needed):")
        for lesson in LESSONS.values():
            try:
                print(f"  {compile_offline(lesson).summary()}")
            except EnvironmentProblem as e:  # the same for every kernel: say it once
                print(f"  cannot run here: {e.message}")
                return 2
            except CourseError as e:
                print(f"  {lesson.id}: FAILED\n    {str(e).replace(chr(10), chr(10) + '    ')}")
                return 1
    return 0
