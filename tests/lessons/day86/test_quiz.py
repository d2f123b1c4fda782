"""Day 86's quiz: every numeric key follows from gemm7_shapes.cu's constants and the lesson's models."""

from __future__ import annotations

from course.lessons import get_lesson
from course.lessons._ladder import ragged_problem
from course.lessons._streamk import StreamK
from course.lessons.day86 import chooser, models
from course.quiz.loader import load_quiz
from course.quiz.model import Numeric

LESSON = get_lesson("day86")
QUIZ = load_quiz(LESSON.quiz_path)
SMS = 132  # an H200


def key(qid: str):  # type: ignore[no-untyped-def]
    return QUIZ.question(qid).answer


def build(bn: int, cluster: int) -> dict[str, int | float]:
    return LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster})


def test_tiles_at_1024_for_day84s_tile():
    c = build(256, 2)
    p = ragged_problem(c, (1024, 1024, 1024), 1)
    assert key("tiles-1024") == p.cta_tiles == (1024 // c["kBM"]) * (1024 // c["kBN"])
    assert key("tiles-1024") < SMS


def test_waves_and_last_wave_of_the_mlp_shape():
    p = ragged_problem(build(256, 2), (4096, 11008, 4096), 1)
    slots = SMS // 2
    assert (
        key("waves-mlp") == -(-p.units // slots) == chooser.estimate(4096, 11008, 4096, SMS, 256, 2, 1).waves
    )
    assert key("last-wave") == p.units - (key("waves-mlp") - 1) * slots
    # the explanation's price of that partial wave is the model's
    lone, share = chooser.LONE_UNIT, chooser.wave_share(p.units, slots) - (key("waves-mlp") - 1)
    said = (
        f"{lone:.2f} + {1 - lone:.2f} x {int(key('last-wave')) - 1} / {slots - 1} = {share:.2f} of a full one"
    )
    assert said in QUIZ.question("last-wave").explanation


def test_the_split_that_fills_the_sms():
    slots = SMS // 2
    fits = [s for s in range(1, 17) if ragged_problem(build(256, 2), (1024, 1024, 16384), s).units <= slots]
    assert key("split-fill") == max(fits)
    assert chooser.choose(1024, 1024, 16384, SMS).split == key("split-fill")


def test_k_range_of_split_one():
    p = ragged_problem(build(256, 2), (1000, 1032, 584), 3)
    ranges = [models.unit_coords(s, p.cluster_tiles_m, p.tiles_n, p.k_tiles, 3)[3:] for s in range(3)]
    assert key("k-range") == ranges[1][1]
    assert [r[1] - r[0] for r in ranges] == [3, 3, 4]


def test_workspace_bytes_of_the_decode_step():
    c = build(256, 1)
    p = ragged_problem(c, (128, 8192, 8192), 4)
    assert (
        key("workspace-bytes")
        == p.workspace_floats * 4
        == models.workspace_bytes(p.cta_tiles, 4, int(c["kBM"]), int(c["kBN"]))
    )
    # the question runs the build it names; it does not say the chooser picks it (issue 39: it no longer does)
    assert "chooser" not in QUIZ.question("workspace-bytes").prompt


def test_the_decode_pick_needs_no_split():
    # what the chooser-decode question says the chooser picks, and why: 2 x 64 = 128 CTAs unsplit (a plain
    # grid since session 19's refit), where the 128-row tile's one tile row needs a split of 4 for as many
    pick = chooser.choose(128, 8192, 8192, SMS)
    assert (pick.bm, pick.bn, pick.cluster, pick.split, pick.units) == (64, 128, 1, 1, 128)
    assert pick.units * pick.cluster == 128 <= SMS
    wide = ragged_problem(build(256, 1), (128, 8192, 8192), 4)
    assert wide.units == pick.units * pick.cluster and wide.cta_tiles == 32
    assert "tile 64 x 128, cluster 1, and does not split K" in QUIZ.question("chooser-decode").prompt


def test_stages_of_the_narrow_builds():
    assert key("stages-128") == build(128, 2)["kStages"] == build(128, 1)["kStages"]
    assert build(256, 2)["kStages"] == 4


def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    assert numeric == {
        "tiles-1024",
        "waves-mlp",
        "last-wave",
        "split-fill",
        "k-range",
        "workspace-bytes",
        "stages-128",
        "deterministic-reads",
        "sk-iters",
        "sk-shared",
        "sk-hybrid-dp",
        "sk-peers",
    }


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day86" and not QUIZ.released
    assert len(QUIZ.questions) >= 10


def test_the_deterministic_build_reads_every_partial_back():
    import re

    split = 4
    assert key("deterministic-reads") == split  # the default build reads split - 1
    # in the kernel: the deterministic branch walks every split; the default skips its own
    text = LESSON.kernel_path.read_text(encoding="utf-8")
    det, default = re.search(
        r"if constexpr \(kDeterministic\) \{(.*?)\} else \{(.*?)return true;", text, re.S
    ).groups()
    assert "for (int o = 0; o < splitK; ++o)" in det and "continue" not in det
    assert "if (o == split) continue;" in default
    assert 64 * chooser.CONFIGS[0][0] * 4 == 64 * 1024  # a 64 x 256 FP32 partial is 64 KiB


# ---- Stream-K: every key from the schedule's transcription (course/lessons/_streamk.py) ----


def streamk(shape: tuple[int, int, int], bn: int, cluster: int, sms: int = SMS) -> StreamK:
    c = LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_STREAMK": 1})
    return ragged_problem(c, shape, 1).stream_k(sms)


def test_streamk_iterations_a_unit_and_the_shared_tiles():
    s = streamk((1000, 3000, 704), 128, 2)
    assert (s.tiles, s.k_tiles, s.slots, s.sk_tiles, s.sk_units) == (96, 11, 66, 96, 66)
    assert s.sk_big == 0 and key("sk-iters") == s.sk_per
    # every unit really walks that many iterations, and one piece of the walk per tile it touches
    assert {sum(pc.k_end - pc.k_begin for pc in s.pieces(u)) for u in range(s.sk_units)} == {key("sk-iters")}
    assert key("sk-shared") == s.shared_tiles()
    # the explanation's count: a tile is shared where a unit boundary falls strictly inside it
    inside = [b for b in range(s.sk_per, s.sk_units * s.sk_per, s.sk_per) if b % s.k_tiles]
    assert key("sk-shared") == len(inside) == 60
    shared = {pc.tile for u in range(s.sk_units) for pc in s.pieces(u) if pc.segs > 1}
    assert len(shared) == key("sk-shared")
    # the unsplit busiest cluster the explanation quotes: two whole tiles
    assert -(-s.tiles // s.slots) * s.k_tiles == 22


def test_streamk_hybrid_keeps_whole_waves_data_parallel():
    s = streamk((4096, 4096, 4096), 256, 2)
    assert s.tiles == 256 and s.slots == 66
    assert key("sk-hybrid-dp") == s.dp_tiles == (s.tiles // s.slots - 1) * s.slots
    assert s.sk_tiles == 124 and (s.sk_per, s.sk_per + (s.sk_big > 0)) == (120, 121)
    assert s.k_tiles < s.sk_per < 2 * s.k_tiles  # between one and two tiles' worth, as the explanation says


def test_streamk_peers_bound_the_units_that_meet_a_tile():
    s = streamk((1000, 3000, 704), 256, 2)
    assert (s.tiles, s.k_tiles, s.sk_per) == (48, 11, 8)
    assert key("sk-peers") == s.sk_peers == -(-s.k_tiles // s.sk_per) + 1
    most = max(pc.segs for u in range(s.sk_units) for pc in s.pieces(u))
    assert most == key("sk-peers")  # the bound is met on this shape, not only an upper bound


def test_streamk_who_stores_is_the_last_arriver_in_the_kernel():
    # The key says the last to count in stores: the fixup region calls reduceSplits with w.segs and
    # stores only when it returns true, which it does for the ticket segs - 1 (the split-k region).
    from course.snippets import get_snippet

    fixup = get_snippet(LESSON.kernel_path, "fixup").text
    assert "counters + counter, 0, w.seg, w.segs);" in fixup
    assert "if (!last) {" in fixup and "storeTile(" in fixup
    split_k = get_snippet(LESSON.kernel_path, "split-k").text
    assert "if (ticket != static_cast<unsigned>(splitK - 1)) {" in split_k
    assert QUIZ.question("sk-who-stores").answer == "arrive"
