"""Day 82 tests (mirror course/lessons/day82/)."""
