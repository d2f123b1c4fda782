"""Day 79 tests (mirror course/lessons/day79/)."""
