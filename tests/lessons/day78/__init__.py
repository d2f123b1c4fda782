"""Day 78 tests (mirror course/lessons/day78/)."""
