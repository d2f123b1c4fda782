"""Day 80 tests (mirror course/lessons/day80/)."""
