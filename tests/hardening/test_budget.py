"""The hardening suite's size is stated in one place and meets the brief."""

from ._util import EXAMPLES


def test_at_least_ten_thousand_generated_inputs():
    assert sum(EXAMPLES.values()) >= 10_000, EXAMPLES
