"""Day 84 tests (mirror course/lessons/day84/)."""
