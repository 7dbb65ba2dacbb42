"""``columns.tabulated`` cuts into cells only the lines of a table's characters (``_TABLE_CHARS``): a line with any
other character must be neither a header nor a row, so leaving it uncut changes no reading."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tierscope.collector.formats.columns import _NAME, _TABLE_CHARS, _VALUE, _all, _cells

#: Real header and row lines: Chainer's PrintReport (chainer examples/mnist, quoted in the blog post
#: "Chainerの環境構築", 2017-04-24) and fastai's Learner table (n-waves/multifit run notes, fastai 1.x, 2019); then
#: a ruled row and header written here to hold the rarer characters of both (a sign, an exponent, a percent sign).
REAL = [
    "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time",
    "1           0.189677    0.105867              0.9419         0.9665                    13.5156",
    "epoch     train_loss  valid_loss  accuracy  time",
    "0         4.346260    4.408598    0.370535  1:12:49",
    "| 3 | -1.5e-3 | nan | 95.2% | +Inf |",
    "| epoch | top-1(%) | lr@5 |",
]


def _kinds(lines: list[str]) -> list[tuple[bool, bool]]:
    """(every cell a name, every cell a value) of each line, cut as ``tabulated`` cuts it."""
    cells = pl.DataFrame({"line": lines}, schema={"line": pl.String}).select(c=_cells(pl.col("line")))
    got = cells.select(_all(pl.col("c"), _NAME).alias("h"), _all(pl.col("c"), _VALUE).alias("r"))
    return list(zip(got["h"].to_list(), got["r"].to_list(), strict=True))


def _table_chars(lines: list[str]) -> list[bool]:
    return pl.Series(lines, dtype=pl.String).str.contains(_TABLE_CHARS).to_list()


def test_real_headers_and_rows_are_of_a_tables_characters() -> None:
    assert _table_chars(REAL) == [True] * 6
    # ...and are read as headers (lines 1, 3, 6) and rows (2, 4, 5) once cut
    assert [h or r for h, r in _kinds(REAL)] == [True] * 6


def test_a_line_of_other_characters_is_not_cut() -> None:
    near = [
        # the 2016 cloudml step line: "[", "," and ":" beside words
        "Train [worker/0], step 100:loss:2.361, accuracy:0.039 (3.997 sec) 20.558 global_steps/s, 4.625 local_steps/s",
        "epoch  loss,  acc",  # a comma in a header's cell
        "1  0.5  0.9  ",  # trailing blanks only: still a row's characters
    ]
    assert _table_chars(near) == [False, False, True]


# a header's and a row's characters, with characters of neither mixed in
_ALPHABET = st.sampled_from([*"aZe9.:%+-|/_() \t", "[", ",", "=", "\u00e9", "\u3000", "\r", "*", "'"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=24), min_size=1, max_size=20))
def test_no_line_left_uncut_would_have_been_a_header_or_a_row(lines: list[str]) -> None:
    for kept, (header, row) in zip(_table_chars(lines), _kinds(lines), strict=True):
        assert kept or not (header or row)
