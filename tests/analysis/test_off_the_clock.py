"""A stored time outside 1970-9999 cannot break the analysis: it is read as no time, and said.

Such a time reached datasets through a LogEntry dated ``0001-01-01T00:00:00Z``; every summary of the
dataset then ended in an OverflowError (the lead clock's origin, the first record's time minus its
elapsed seconds, fell before the year 1).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support.lead_records import lead_frame
from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset

T0 = datetime(2024, 1, 1, tzinfo=UTC)
#: 10 steps/s: step s at elapsed s / 10 seconds
STEPS = list(range(1, 101))
YEAR_20000_US = 568_971_820_800_000_000  # 20000-01-01T00:00:00Z: `date -d 20000-01-01T00:00:00Z +%s`, in µs


def write_run(root: Path, first_stamp: pl.Expr) -> Dataset:
    """Run ``r``: 100 records of the master, 10 steps/s, timed from 2024-01-01 except the first,
    whose time is ``first_stamp``; and a ``started`` event at that time too."""
    ds = Dataset(root)
    stamps = [T0 + timedelta(seconds=s / 10) for s in STEPS]
    frame = lead_frame("r", STEPS, [s / 10 for s in STEPS], 10.0, timestamps=stamps).with_columns(
        timestamp=pl.when(pl.col("step") == 1).then(first_stamp).otherwise(pl.col("timestamp"))
    )
    ds.append("steps", frame)
    started = pl.DataFrame({"run_id": ["r"], "tier": ["BASIC"], "event": ["started"], "source": ["app.log"]})
    ds.append("events", started.with_columns(timestamp=first_stamp))
    return ds


OFF_THE_CLOCK = {
    "year 1": pl.lit(datetime(1, 1, 1, tzinfo=UTC)),
    "a second before 1970": pl.lit(datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),
    "year 20000": pl.lit(YEAR_20000_US).cast(pl.Datetime("us", "UTC")),
}


@pytest.mark.parametrize("when", OFF_THE_CLOCK, ids=list(OFF_THE_CLOCK))
def test_a_time_off_the_clock_is_no_time(tmp_path: Path, when: str) -> None:
    ds = write_run(tmp_path / "ds", OFF_THE_CLOCK[when])
    analysis = analyze(Dataset(ds.root))
    (row,) = analysis.summary.iter_rows(named=True)
    # The first record's time is gone, so the lead's records are not all timed: the clock is
    # elapsed_s (one segment), from 0 s to the last record's 100 / 10 = 10 s.
    assert row["goodput_clock"] == "elapsed"
    assert row["lifetime_s"] == pytest.approx(10.0)
    assert row["steady_global_steps_per_s"] == pytest.approx(10.0)
    assert 0 <= row["goodput"] <= 1
    assert analysis.notes == [
        (
            "r",
            "1 record and 1 event stored with a time outside 1970-9999, read as untimed (the run's clock is "
            "then its elapsed seconds where it logs them); collect its logs into a new dataset to reject them",
        )
    ]


def test_summary_and_report_say_it(tmp_path: Path) -> None:
    ds = write_run(tmp_path / "ds", OFF_THE_CLOCK["year 1"])
    runner = CliRunner()
    done = runner.invoke(app, ["summary", "-d", str(ds.root), "--json"])
    assert done.exit_code == 0, done.output
    assert "note: run r: 1 record and 1 event stored with a time outside 1970-9999" in done.stderr
    done = runner.invoke(app, ["report", "-d", str(ds.root), "--out", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    assert "outside 1970-9999" in done.stderr


def test_times_on_the_clock_bring_no_note(tmp_path: Path) -> None:
    ds = write_run(tmp_path / "ds", pl.lit(T0))
    analysis = analyze(Dataset(ds.root))
    assert analysis.notes == []
    assert analysis.summary["goodput_clock"][0] == "timestamp"
