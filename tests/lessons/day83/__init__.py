"""Day 83 tests (mirror course/lessons/day83/)."""
