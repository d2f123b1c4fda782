"""Test data for the quiz tests: kernels with known line numbers, a sample quiz."""

# Line numbers matter: the line question's anchor is on line 5.
KERNEL_76 = """\
// test kernel for day76
// snippet: issue-tma
    BlockBarrier::arrival_token token;
    if (threadIdx.x == 0) {
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
        token = bar.arrive();
    }
// end snippet
// snippet: plain-store
    out[k] = tile[k] + 1.0f;
// end snippet
// snippet: encode-map
    const cuuint32_t boxDim[2] = {kTileWidth, kTileHeight};
// end snippet
"""

KERNEL_78 = """\
// test kernel for day78
// snippet: descriptor
    return addr >> 4;
// end snippet
// snippet: pipeline
    asm volatile("wgmma.wait_group.sync.aligned 0;");
// end snippet
// snippet: gate
    if (prop.major != 9 || prop.minor != 0) {
// end snippet
"""

# Sentinels: strings that exist only in the key, so a test can search any
# learner-facing output for them.
SAMPLE_QUIZ = """\
[quiz]
id = "day76"
title = "Sample quiz"
lesson = "day76"

[[questions]]
id = "s1"
type = "single"
points = 1
prompt = "Pick `b`."
options = [
  { id = "a", text = "Option A" },
  { id = "b", text = "Option B" },
  { id = "c", text = "Option C" },
]
answer = "b"
explanation = "EXPLAIN-S1 because b."
reference = "REF-S1"

[[questions]]
id = "m1"
type = "multiple"
points = 2
partial = "net-correct"
prompt = "Pick a and b."
options = [
  { id = "a", text = "A" },
  { id = "b", text = "B" },
  { id = "c", text = "C" },
  { id = "d", text = "D" },
]
answers = ["a", "b"]
explanation = "EXPLAIN-M1"
reference = "REF-M1"

[[questions]]
id = "n1"
type = "numeric"
points = 1
prompt = "How many bytes?"
answer = 16384
rtol = 0
atol = 0.5
unit = "bytes"
explanation = "EXPLAIN-N1"
reference = "REF-N1"

[[questions]]
id = "t1"
type = "text"
points = 1
prompt = "Name the instruction."
accept = ["SECRET-ANSWER.bulk", "secret answer two"]
explanation = "EXPLAIN-T1"
reference = "REF-T1"

[[questions]]
id = "l1"
type = "line"
points = 1
snippet = "issue-tma"
prompt = "Which line expects bytes?"
anchors = ["barrier_arrive_tx(bar, 1"]
explanation = "EXPLAIN-L1"
reference = "REF-L1"
"""

KEY_SENTINELS = ("EXPLAIN-", "SECRET-ANSWER", "secret answer two", "barrier_arrive_tx(bar, 1")
