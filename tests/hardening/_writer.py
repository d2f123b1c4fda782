"""A fork server for the kill tests: imports the course once, forks writers on demand.

Run as ``python _writer.py FOLDER QUIZ_ID QUIZ_VERSION``. Each line on stdin
is a command; the server answers each with one line on stdout:

    spawn MODE TAG GEN SIZE  ->  "pid N"   (a child that saves submissions)
    quit                     ->  (exits)

The child saves ``alice``'s submission through ``write_submission`` again
and again, generation GEN, GEN+1, ... Generation g is self-checking: its
one text response is ``"TAG:g:"`` followed by SIZE copies of one letter
that depends on g, and ``attempts`` records g, so a file that mixed two
saves cannot pass ``consistent()``. MODE says where the child stops:

    loop            save forever (the parent kills it at a random moment)
    once            save generation GEN once, then exit normally
    before-fsync    write the temp file, then print "ready" and sleep before os.fsync
    before-replace  write and fsync the temp file, then print "ready" and sleep before os.replace
    after-replace   save once, print "ready" after the rename, then sleep
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

QUESTION = "ptx-name"  # a text question of the day76 quiz: any string is a valid response


def payload(tag: str, gen: int, size: int) -> str:
    return f"{tag}:{gen}:" + chr(ord("a") + gen % 26) * size


def consistent(raw: bytes) -> tuple[str, int]:
    """(tag, generation) of a whole file; AssertionError for anything else."""
    data = json.loads(raw)
    text = data["responses"][QUESTION]
    tag, gen_text, body = text.split(":", 2)
    gen = int(gen_text)
    assert text == payload(tag, gen, len(body)), "the response text mixes two saves"
    assert data["attempts"][QUESTION] == gen, "attempts and response come from different saves"
    return tag, gen


def say(text: str) -> None:
    """One line on stdout in one write(2): the server and its children share the pipe, and
    a line under PIPE_BUF written at once is never interleaved with another ("4654ready"
    came from print()'s text and newline going out in two writes)."""
    os.write(1, (text + "\n").encode("utf-8"))


def _pause(label: str, real):  # type: ignore[no-untyped-def]
    def paused(*args, **kwargs):  # type: ignore[no-untyped-def]
        if label == "after-replace":
            real(*args, **kwargs)
        say("ready")
        time.sleep(3600)
        return real(*args, **kwargs)

    return paused


def child(folder: Path, quiz: str, version: str, mode: str, tag: str, gen: int, size: int) -> None:
    from course import _atomic
    from course.quiz.submission import Submission, write_submission

    if mode == "before-fsync":
        _atomic.os.fsync = _pause(mode, os.fsync)  # type: ignore[attr-defined]
    elif mode in ("before-replace", "after-replace"):
        _atomic.os.replace = _pause(mode, os.replace)  # type: ignore[attr-defined]
    while True:
        submission = Submission(
            quiz=quiz,
            quiz_version=version,
            learner="alice",
            submitted_at=f"2025-01-01T10:00:00.{gen % 1000000:06d}+00:00",
            responses={QUESTION: payload(tag, gen, size)},
            attempts={QUESTION: gen},
        )
        write_submission(submission, folder)
        if mode == "once":
            return
        gen += 1


def main() -> None:
    folder, quiz, version = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    import course.quiz.submission  # noqa: F401  (import once, before forking)

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    say("up")
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            return
        _, mode, tag, gen, size = words
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                child(folder, quiz, version, mode, tag, int(gen), int(size))
            except BaseException as e:  # say so: the parent fails the test on it
                say(f"error {type(e).__name__}: {e}"[:400])
                code = 1
            finally:
                os._exit(code)
        say(f"pid {pid}")


if __name__ == "__main__":
    main()
