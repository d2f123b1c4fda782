"""Per-lesson tests, one package per lesson (tests/lessons/<id>/ mirrors course/lessons/<id>/).

Packages, so that two lessons' test_host.py (and test_bench.py, test_figures.py) cannot clash.
"""
