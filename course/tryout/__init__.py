"""The learner's own version of a kernel, run safely.

``workspace`` (the learner's copies and where they live), ``sandbox`` (a
version compiled and run in a confined child process; the child is
``_child``), ``outcome`` (what a run came to, in words), ``suggestions``
(the suggested source edits a page offers), ``trial`` (what ``page.try_mine()``
and ``python -m course try`` share: run a version and set it beside the
lesson's own).
"""
