"""Programmatic dependent launch, checked once for every lesson whose kernel waits on griddepcontrol
(Days 86 and 87: ``tests/lessons/day86/test_pdl39.py``, ``tests/lessons/day87/test_pdl40.py``): the
PTX order on the CPU, and the start and end of a chain of dependent launches on a GPU."""

from __future__ import annotations

import re
from typing import Any

from course.kernel.compile import compile_offline

GLOBAL = re.compile(
    r"^\s*(?:@%p\d+\s+)?(cp\.async\.bulk\.tensor|ld\.global|st\.global|atom\.global|red\.global)\b", re.M
)


def assert_waits_before_global_memory(lesson: Any, flags: dict[str, int]) -> None:
    """In the PTX of ``lesson``'s build of ``flags``: one griddepcontrol.wait, then launch_dependents, both
    before the first global access (a TMA copy, a load, a store, an atomic); and the host is told."""
    ptx = compile_offline(lesson, defines=flags).ptx
    body = ptx[ptx.index(f".entry {lesson.kernel_name}") :]
    wait = body.index("griddepcontrol.wait;")
    launch = body.index("griddepcontrol.launch_dependents;")
    first = GLOBAL.search(body)
    assert first is not None, "no global access found: the pattern no longer matches the PTX"
    assert wait < launch < first.start(), (first.group(1), body[max(0, wait - 200) : first.end()])
    assert body.count("griddepcontrol.wait;") == 1
    assert lesson.constants(flags)["kDependentLaunch"] == 1


def first_result(w: Any) -> Any:
    """A chain's start (GPU): the workload launches dependent; set 0 poisoned, launched once, checked; a
    copy of its D, for the bits the chain must leave."""
    # heavy: cupy, on a GPU only
    import cupy as cp

    assert w.config.dependent
    w.poison(0)
    w.launch(0)
    cp.cuda.Device().synchronize()
    assert w.check(w.out(0)).passed
    return w.out(0).copy()


def assert_still_exact(w: Any, first: Any, bits: bool) -> None:
    """After the chain (GPU): set 0 passes its check again and, with ``bits``, is ``first`` bit for bit."""
    # heavy: cupy, on a GPU only
    import cupy as cp

    cp.cuda.Device().synchronize()
    assert w.check(w.out(0)).passed
    if bits:
        assert bool((w.out(0).view(cp.uint16) == first.view(cp.uint16)).all())
