"""Day 81 tests (mirror course/lessons/day81/)."""
