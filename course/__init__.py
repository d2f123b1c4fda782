"""Hopper at the metal: the course package the lesson pages import.

The public surface is small; everything else lives in modules a page or a
test imports directly (``course.lessons.<id>.host``, ``course.hopper.wgmma``, ...).
"""

from .errors import CheckFailed, CourseError, EnvironmentProblem
from .lessons import LESSONS, Lesson, get_lesson
from .page import Page, show_refusal

__all__ = [
    "LESSONS",
    "CheckFailed",
    "CourseError",
    "EnvironmentProblem",
    "Lesson",
    "Page",
    "get_lesson",
    "show_refusal",
]
