"""Day 86 tests (mirror course/lessons/day86/)."""
