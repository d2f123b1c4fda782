"""A stand-in for the bench engine's context (``course.bench.spec.Context``), on the CPU: what an
attention lesson's ``finish`` (``course.lessons._attention_bench``) compiles, verifies and times,
with made-up per-call times, so its logic is tested without a GPU (Days 88 and 89's test_bench)."""

from __future__ import annotations


class Samples:
    def __init__(self, ms):
        self.per_call_ms = ms

    def timing(self):
        from types import SimpleNamespace

        return SimpleNamespace(median_ms=sorted(self.per_call_ms)[len(self.per_call_ms) // 2])


class FakeContext:
    """What ``finish`` asks of the engine, on the CPU: each build it compiles, each call it
    verifies, and per-call times where the peer named ``slow`` takes twice the kernel's."""

    def __init__(self, lesson, sizes, peers):
        from types import SimpleNamespace

        self.lesson, self.sizes, self.peers = lesson, sizes, peers
        self.l2_bytes = 50 * 2**20
        self.compiled, self.verified, self.said = [], [], []
        self.timer = SimpleNamespace(samples_together=self._samples)
        work = SimpleNamespace(sets=2, launch=lambda j: None)

        def workload(compiled, n, sets, purpose, causal):
            self.verified.append(("work", n, compiled, causal))
            return work

        host = SimpleNamespace(HOST=SimpleNamespace(workload=workload))
        self.asked = []  # (lesson id, module name) of every module finish asks the lesson for

        def module(name):
            self.asked.append((lesson.id, name))
            return host

        self.lesson = SimpleNamespace(id=lesson.id, module=module)

    def compile(self, n, defines=None):
        self.compiled.append((n, defines))
        return ("build", n, tuple(sorted((defines or {}).items())))

    def verify(self, n, work, calls):
        for name, (call, _) in calls.items():
            call(0)
            self.verified.append(name)
        return ""

    def _samples(self, calls):
        return {k: Samples([2.0 if "slow" in k else 1.0] * 3) for k in calls}

    def progress(self, text):
        self.said.append(text)
