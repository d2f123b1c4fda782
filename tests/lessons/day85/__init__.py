"""Day 85 tests (mirror course/lessons/day85/)."""
