"""Day 90's BF16 build (-DATTN_BF16=1) on the CPU: the shared checks (tests/lessons/attention_bf16.py)."""

from __future__ import annotations

from tests.lessons.attention_bf16 import AttentionBf16Checks


class TestDay90Bf16(AttentionBf16Checks):
    lesson_id = "day90"
