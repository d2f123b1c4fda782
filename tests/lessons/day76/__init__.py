"""Day 76 tests (mirror course/lessons/day76/)."""
