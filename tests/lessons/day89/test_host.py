"""Day 89's host side on the CPU: the shared attention host (course/lessons/_attention.py), named as
the kernel's own C++ program names its PASS line; Day 88's checks and wording are its tests'."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.host import Check, host_of
from course.lessons import get_lesson
from course.lessons._attention import AttentionHost, label_of

LESSON = get_lesson("day89")


def test_each_attention_host_says_the_name_its_cpp_program_prints():
    assert label_of(LESSON) == "attn89" and label_of(get_lesson("day88")) == "attn88"
    host = host_of(LESSON)
    assert isinstance(host, AttentionHost) and host.lesson is LESSON
    host.last, host.last_work = ((2, 3, 1000, 128), True, "float16"), None
    check = Check("relative", 0, 10, 1e-3, 4e-3, None)
    assert host.pass_line(10, check).startswith("attn89 B=2 H=3 S=1000 D=128 causal: PASS")
    host.last = ((2, 3, 1000, 128), False, "bfloat16")  # the -DATTN_BF16=1 build's line
    assert host.pass_line(10, check).startswith("attn89 B=2 H=3 S=1000 D=128 BF16 non-causal: PASS")


def test_a_kernel_without_its_pass_line_is_refused_naming_the_file(tmp_path, monkeypatch):
    kernel = tmp_path / "attn.cu"
    kernel.write_text('int main() { std::printf("ALL PASS\\n"); }\n', "utf-8")
    monkeypatch.setattr(type(LESSON), "kernel_path", property(lambda self: kernel))
    with pytest.raises(CourseError, match="must print its PASS line once") as e:
        label_of(LESSON)
    assert e.value.path == kernel


def test_the_lesson_run_and_its_cases_are_day_88s():
    mine, before = host_of(LESSON), host_of(get_lesson("day88"))
    assert type(mine) is type(before)
    assert [(c.name, c.options) for c in mine.cases] == [(c.name, c.options) for c in before.cases]
    assert LESSON.run_size == get_lesson("day88").run_size == 1000
