"""`recommend`'s "why not" column says why each candidate misses: the deadline in the user's words, a quota,
a failure; the price rows' age is said once under the table, not as the reason a candidate misses."""

from __future__ import annotations

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset


def test_why_not_names_the_missed_deadline_the_quota_and_the_failure(dataset_2016: Dataset) -> None:
    got = CliRunner().invoke(
        app,
        ["recommend", "-d", str(dataset_2016.root), "--steps", "1000000", "--deadline", "24h",
         "--quota", "ml-units=25", "--price-date", "2026-12-06"],
        env={"COLUMNS": "250"},
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    rows: dict[str, str] = {}
    for line in got.stdout.splitlines():
        if line.split():
            rows.setdefault(line.split()[0], line)  # the table's row, not a later sentence naming the run
    # BASIC: 1,000,000 / 4.6400 steps/s (sustained; no start-up) = 59.87 h, over the 24 h asked for, on the
    # sustained rate; the steady rate's 59.87 h would not meet it either, so nothing more is said.
    assert rows["basic"].rstrip().endswith("missed: 59.87 h > 24h at the sustained rate")
    # STANDARD_1: 12.41 h meets it, nothing to say.
    assert " yes " in rows["standard_1"] and rows["standard_1"].rstrip().endswith("-")
    # PREMIUM_1 at 2019 prices: 33.7829 ML units an hour, above the 25 allowed.
    assert "refused: needs 33.7829 ML_UNITS, above the quota of 25" in rows["PREMIUM_1"]
    assert "failed on PREMIUM_1 with gcloud crashed (BadStatusCodeError)" in rows["premium_1"]
    # The 2019 rows are 2592 days old on 2026-12-06: said once, naming the runs priced from them.
    assert got.stdout.count("2592 days before 2026-12-06") == 1
    assert "basic, standard_1: ML units from the 2019-11-01 table" in " ".join(got.stdout.split())
