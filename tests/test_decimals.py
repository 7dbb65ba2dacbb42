"""tierscope.decimals: money and hours with two decimals, small amounts with three significant digits."""

from __future__ import annotations

import pytest

from tierscope.decimals import significant_format, two_decimals


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234.5, "1,234.50"),
        (0.1, "0.10"),  # two decimals from 0.1 up: off by 5 % at most
        (0.0949, "0.0949"),  # below, three significant digits (two decimals said 0.09)
        (0.005978, "0.00598"),
        (0.000999999, "0.00100"),  # rounds up across a power of ten: still three digits
        (0.00009999, "0.000100"),  # rounds up to a ten-thousandth: fixed point
        (0.0000449, "4.49e-05"),  # below a ten-thousandth: scientific form
        (1e-300, "1.00e-300"),  # was 0.000...0001 in 304 characters
        (-1e-300, "-1.00e-300"),
        (-0.004, "-0.00400"),
        (0.0, "0.00"),
        (-0.0, "0.00"),  # was -0.00
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
    ],
)
def test_two_decimals(value: float, text: str) -> None:
    assert two_decimals(value) == text


def test_the_format_counts_significant_digits_and_keeps_whole_numbers_whole() -> None:
    assert [format(v, significant_format(v)) for v in (17031.6, 12.345, 9.999, 1.0, 0.0)] == [
        "17,032", "12.3", "10.0", "1.00", "0.00"
    ]  # fmt: skip
    assert format(0.00123456, significant_format(0.00123456, 4)) == "0.001235"  # four digits asked
