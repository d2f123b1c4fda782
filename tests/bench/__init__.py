"""Benchmark tests (a package, so their module names cannot clash with tests/test_*.py)."""
