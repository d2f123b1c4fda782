"""Day 80's quiz: every numeric key follows from gemm2_pipeline.cu's constants and a replay of its loops.

The replay mirrors the producer's and the consumer's ring bookkeeping
(``if (++stage == kStages) { stage = 0; phase ^= 1; }``), and checks the
claim the page makes about it: with one bit of phase, every wait names
either the barrier's current phase or the one just before it.
"""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.quiz import load_quiz
from course.quiz.model import WhichLine
from course.snippets import load_snippets

LESSON = get_lesson("day80")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
SNIPPETS = load_snippets(LESSON.kernel_path)
C = LESSON.constants()
HALF = 2


@pytest.fixture(scope="module")
def quiz():
    return load_quiz(LESSON.quiz_path)


def ring(tiles: int) -> list[tuple[int, int, int]]:
    """(kt, stage, phase) in the order both loops walk the ring."""
    out, stage, phase = [], 0, 0
    for kt in range(tiles):
        out.append((kt, stage, phase))
        stage += 1
        if stage == C["kStages"]:
            stage, phase = 0, phase ^ 1
    return out


def test_the_replay_is_the_kernels_bookkeeping():
    for region in ("producer", "consumer"):
        text = SNIPPETS[region].text
        assert "if (++stage == kStages) {" in text and "phase ^= 1;" in text
    assert "mbarWait(&s.empty[stage], phase ^ 1);" in SNIPPETS["producer"].text
    assert "mbarWait(&s.full[stage], phase);" in SNIPPETS["consumer"].text
    assert "mbarArrive(&s.empty[prevStage]);" in SNIPPETS["consumer"].text


def test_numeric_keys_follow_from_the_kernel(quiz):
    stage_bytes = (C["kBM"] + C["kBN"]) * C["kBK"] * HALF
    assert quiz.question("ring-bytes").answer == C["kStages"] * stage_bytes
    assert "mbarInit(&s.empty[i], kConsumers);" in SOURCE
    assert quiz.question("empty-count").answer == C["kConsumers"]
    steps = ring(16)
    assert {phase ^ 1 for kt, _, phase in steps if kt < C["kStages"]} == {
        quiz.question("first-empty-parity").answer
    }
    _, _, phase7 = steps[7]
    assert quiz.question("producer-parity-kt7").answer == phase7 ^ 1
    _, _, phase12 = steps[12]
    assert quiz.question("consumer-parity-kt12").answer == phase12


def test_sizeof_storage_matches_the_launch_request():
    members = C["kStages"] * (C["kBM"] + C["kBN"]) * C["kBK"] * HALF + 2 * C["kStages"] * 8
    storage = -(-members // C["kSmemAlign"]) * C["kSmemAlign"]
    assert C["kSmemBytes"] == storage + C["kSmemAlign"]


@pytest.mark.parametrize("seed", range(20))
def test_one_bit_of_phase_is_enough(seed):
    """Replay producer, TMA and consumer in a random interleaving, with barriers that count phases.

    Each time a side polls a barrier, the phase it means (round r for full[s], round r - 1 for
    empty[s]) must be the barrier's current phase or the one just before it: the only two a parity
    can name. Then the parity alone decides the wait exactly as the full phase number would.
    """
    import random

    rng = random.Random(seed)
    stages, tiles = C["kStages"], 4 * C["kStages"] + 3
    full = [0] * stages  # completed phases of full[s]
    empty = [0] * stages  # completed phases of empty[s]
    in_flight: list[int] = []  # stages whose TMA bytes have not landed yet
    steps = ring(tiles)
    p = c = 0  # next kt of the producer and the consumer

    def parity_wait(completed: int, meant: int, parity: int) -> bool:
        assert completed in (meant, meant + 1), (completed, meant)  # current phase, or the one before
        # The hardware answers from the parity alone: true iff it names the phase just before the
        # current one (completed - 1), false if it names the current, incomplete one.
        by_parity = (completed - 1) % 2 == parity
        assert by_parity == (completed > meant)  # ...which is the answer the full phase number gives
        return by_parity

    while c < tiles:
        moves = []
        if p < tiles:
            moves.append("produce")
        if in_flight:
            moves.append("land")
        if c < p:
            moves.append("consume")
        move = rng.choice(moves)
        if move == "produce":
            kt, stage, phase = steps[p]
            if parity_wait(empty[stage], kt // stages - 1, phase ^ 1):
                in_flight.append(stage)
                p += 1
        elif move == "land":
            stage = in_flight.pop(rng.randrange(len(in_flight)))
            full[stage] += 1
        else:
            kt, stage, phase = steps[c]
            if parity_wait(full[stage], kt // stages, phase):
                if kt > 0:
                    empty[steps[kt - 1][1]] += 1  # release prevStage after wait_group 1
                c += 1
    assert c == tiles and p == tiles


def test_the_quiz_asks_about_every_region_the_lesson_shows(quiz):
    for name in LESSON.snippets:
        assert any(
            (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
            for q in quiz.questions
        ), name


def test_the_right_option_is_not_always_first(quiz):
    firsts = [q.options[0].id == q.answer for q in quiz.questions if q.type == "single"]
    assert firsts and not any(firsts)
    assert len(quiz.questions) >= 10
    assert all(q.reference.strip() and q.explanation.strip() for q in quiz.questions)
