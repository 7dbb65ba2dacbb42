"""Dated, sourced price rows: the shipped table, user price files, what a run's pools cost, staleness."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from tierscope.analysis import machines as m
from tierscope.analysis import prices as p
from tierscope.analysis.cost import run_costs, tier_costs

ON = date(2026, 12, 6)


def test_a_runs_price_is_its_pools_rows_each_named() -> None:
    table = p.PriceTable()
    # n1-standard-8 host 0.379998 (Cyclenerd @fd66b26f) + 1 x T4 0.35 (skypilot-catalog @006059e0) = 0.729998
    t4 = p.quote(m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1),)), ON, "us-central1", table)
    assert t4.usd_per_hour == pytest.approx(0.729998)
    assert [(u.row.resource, u.quantity, u.row.valid_from) for u in t4.rows] == [
        ("n1-standard-8", 1, date(2026, 7, 30)), ("NVIDIA_TESLA_T4", 1, date(2026, 7, 30))
    ]  # fmt: skip
    assert "Cyclenerd" in t4.sources() and "skypilot-catalog" in t4.sources()
    # a2-highgpu-8g: host 5.91582 + 8 x A100 2.93391 = 5.91582 + 23.47128 = 29.3871
    a100 = p.quote(m.Hardware((m.pool("chief", "a2-highgpu-8g"),)), ON, "us-central1", table)
    assert a100.usd_per_hour == pytest.approx(29.3871)
    # a TPU VM is its chips: v5litepod-8 = 8 x 1.20 = 9.60 (no host row)
    v5e = p.quote(m.Hardware((m.slice_pool("v5litepod-8"),)), ON, "us-central1", table)
    assert v5e.usd_per_hour == pytest.approx(9.6) and [u.row.resource for u in v5e.rows] == ["TPU_V5_LITEPOD"]
    # spot: n1-standard-8 0.13402 + T4 0.175 = 0.30902
    spot = m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1, spot=True),))
    assert p.quote(spot, ON, "us-central1", table).usd_per_hour == pytest.approx(0.30902)
    # a region without rows: no price, and the reason names the row to add
    nowhere = p.quote(spot, ON, "asia-east1", table)
    assert nowhere.usd_per_hour is None and "n1-standard-8 (asia-east1, spot" in (nowhere.missing or "")
    # before the rows' date: priced from the earliest rows, and flagged (the test below)
    early = p.quote(spot, date(2026, 1, 1), "us-central1", table)
    assert early.usd_per_hour == pytest.approx(0.30902) and early.stale


def test_a_row_older_than_180_days_is_flagged_with_the_remedy() -> None:
    hw = m.Hardware((m.pool("chief", "a2-highgpu-1g"),))
    # 2026-07-30 + 180 days = 2027-01-26: fresh on that day, stale the day after
    assert not p.quote(hw, date(2027, 1, 26), "us-central1", p.PriceTable()).stale
    later = p.quote(hw, date(2027, 1, 27), "us-central1", p.PriceTable())
    assert later.stale
    assert "a2-highgpu-1g from 2026-07-30 (181 days)" in (later.stale_note() or "")
    assert "tierscope prices update" in (later.stale_note() or "")


def test_a_run_dated_before_every_row_is_priced_from_the_earliest_and_flagged() -> None:
    # a TF log of 2024-03-11 on 1 x n1-standard-8 + 1 x T4: the shipped rows start 2026-07-30, so it is priced
    # from them, 0.379998 + 0.35 = 0.729998 USD/h, flagged (stale) with the row's date and the run's
    runs = pl.DataFrame(
        {"run_id": ["t4"], "tier": [None], "date": [date(2024, 3, 11)], "topology": [json.dumps(
            {"chief": {"machine_type": "n1-standard-8", "count": 1, "accelerator_type": "NVIDIA_TESLA_T4",
                       "accelerator_count": 1}})]},
        schema_overrides={"tier": pl.String, "date": pl.Date},
    )  # fmt: skip
    (row,) = run_costs(runs, ON).to_dicts()
    assert row["usd_per_hour"] == pytest.approx(0.729998) and row["price_date"] == date(2024, 3, 11)
    assert row["price_stale"] is True
    assert "NVIDIA_TESLA_T4 from the 2026-07-30 row, after the priced date 2024-03-11" in row["price_note"]
    assert "--prices FILE" in row["price_note"]
    # a user's row of that date wins over the earliest shipped one: 0.379998 + 0.30 = 0.679998, not flagged
    ours = p.PriceRow("NVIDIA_TESLA_T4", "us-central1", "on-demand", 0.30, date(2024, 1, 1), "our 2024 bill")
    host = p.PriceRow("n1-standard-8", "us-central1", "on-demand", 0.379998, date(2024, 1, 1), "our 2024 bill")
    (mine,) = run_costs(runs, ON, table=p.PriceTable((ours, host))).to_dicts()
    assert mine["usd_per_hour"] == pytest.approx(0.679998) and mine["price_stale"] is False


def test_legacy_rows_older_than_180_days_are_flagged_unless_a_newer_row_followed() -> None:
    runs = pl.DataFrame(
        {"run_id": ["today", "y2016", "y2020"], "tier": ["STANDARD_1"] * 3,
         "date": [None, date(2016, 11, 20), date(2020, 6, 1)]},
        schema_overrides={"date": pl.Date},
    )  # fmt: skip
    got = {r["run_id"]: r for r in run_costs(runs, ON).to_dicts()}
    # no date: priced today (2026-12-06) from the 2019-11-01 table, 4.0571 units x 0.49 = 1.987979 USD/h;
    # 2019-11-01 -> 2026-12-06 is 2592 days (> 180), and no newer ML-unit table exists: flagged
    today = got["today"]
    assert today["usd_per_hour"] == pytest.approx(1.987979) and today["price_stale"] is True
    assert "2592 days before 2026-12-06" in today["price_note"]
    assert "cannot refresh retired ML units" in today["price_note"] and "--prices FILE" in today["price_note"]
    # 2020-06-01 is 213 days after 2019-11-01: flagged too
    assert got["y2020"]["price_stale"] is True and "213 days" in got["y2020"]["price_note"]
    # a 2016 run is priced from the 2016-01-01 beta row (10 units): 324 days old, but the 2018 table followed
    # it, so it is known to have held in 2016: not flagged
    assert got["y2016"]["ml_units_per_hour"] == 10 and got["y2016"]["price_stale"] is False
    assert got["y2016"]["price_note"] is None


def test_user_price_files_override_and_bad_rows_name_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "negotiated.csv"
    good.write_text(
        "resource,region,pricing,usd_per_hour,valid_from,source\n"
        "NVIDIA_TESLA_A100,us-central1,on-demand,2.00,2026-01-01,our contract 2026\n"
        "NVIDIA_TESLA_A100,asia-east1,on-demand,3.00,2026-01-01,our contract 2026\n"
    )
    table = p.PriceTable.with_files([good])
    # a user's row wins over the shipped (newer) one for the dates it covers: 0.73948 + 2.00 = 2.73948
    hw = m.Hardware((m.pool("chief", "a2-highgpu-1g"),))
    assert p.quote(hw, ON, "us-central1", table).usd_per_hour == pytest.approx(2.73948)
    toml = tmp_path / "prices.toml"
    toml.write_text(
        '[[price]]\nresource = "TPU_V5_LITEPOD"\nregion = "us-central1"\npricing = "on-demand"\n'
        'usd_per_hour = 0.9\nvalid_from = 2026-10-01\nsource = "committed use, 2026-10"\n'
    )
    # 8 chips x 0.9 = 7.2
    v5e = m.Hardware((m.slice_pool("v5litepod-8"),))
    assert p.quote(v5e, ON, "us-central1", p.PriceTable.with_files([toml])).usd_per_hour == pytest.approx(7.2)
    bad = tmp_path / "bad.csv"
    header = "resource,region,pricing,usd_per_hour,valid_from,source\n"
    cases = {
        "n1-standard-8,us-central1,on-demand,-1,2026-01-01,x\n": r"bad.csv:2: usd_per_hour -1 is not a price",
        "n1-standrd-8,us-central1,on-demand,1,2026-01-01,x\n": r"bad.csv:2: unknown machine type .*n1-standard-8",
        "n1-standard-8,us-central1,reserved,1,2026-01-01,x\n": r"bad.csv:2: pricing 'reserved'",
        "n1-standard-8,us-central1,on-demand,1,2026-13-01,x\n": r"bad.csv:2: valid_from '2026-13-01'",
        "n1-standard-8,us,on-demand,1,2026-01-01,x\n": r"bad.csv:2: region 'us' is not a Google Cloud region",
        "complex_model_s,us-central1,on-demand,1,2026-01-01,x\n": r"bad.csv:2: 'complex_model_s' is a legacy",
    }
    for line, message in cases.items():
        bad.write_text(header + line)
        with pytest.raises(p.PriceFileError, match=message):
            p.load_file(bad)
    bad.write_text("resource,region,usd_per_hour\n")
    with pytest.raises(p.PriceFileError, match=r"bad.csv:1: no column pricing, valid_from, source"):
        p.load_file(bad)


def test_custom_on_standard_1s_machines_costs_standard_1_at_every_date() -> None:
    custom = json.dumps({"master": {"machine_type": "complex_model_s", "count": 1},
                         "worker": {"machine_type": "complex_model_s", "count": 4},
                         "ps": {"machine_type": "standard", "count": 3}})  # fmt: skip
    # the tables' dates, a day of each era, and today
    for day in (date(2016, 1, 1), date(2016, 12, 31), date(2018, 1, 1), date(2019, 11, 1), date(2020, 3, 1), ON):
        runs = pl.DataFrame(
            {"run_id": ["custom", "standard"], "tier": ["CUSTOM", "STANDARD_1"], "date": [day, day],
             "topology": [custom, None]}
        )  # fmt: skip
        costs = {r["run_id"]: r for r in tier_costs(runs, day).to_dicts()}
        assert costs["custom"]["ml_units_per_hour"] == costs["standard"]["ml_units_per_hour"], day
        assert costs["custom"]["usd_per_hour"] == costs["standard"]["usd_per_hour"], day


def test_legacy_runs_name_their_rows_and_a_row_of_another_date() -> None:
    gpu = json.dumps({"master": {"machine_type": "complex_model_s", "count": 1},
                      "worker": {"machine_type": "complex_model_m_gpu", "count": 2}})  # fmt: skip
    runs = pl.DataFrame(
        {"run_id": ["basic", "gpu", "laptop"], "tier": ["BASIC", "CUSTOM", "local"],
         "date": [date(2020, 1, 1), date(2020, 1, 1), None], "topology": [None, gpu, None]}
    )  # fmt: skip
    costs = {r["run_id"]: r for r in run_costs(runs, ON, "us").to_dicts()}
    assert costs["basic"]["ml_units_per_hour"] == pytest.approx(0.3878)  # BASIC, Nov 2019
    assert "November 2019" in costs["basic"]["price_rows"] and costs["basic"]["price_date_origin"] == "run"
    # complex_model_m_gpu has no 2019 row: 0.5788 + 2 x 7.6278 (2018) = 15.8344, and the note says so
    assert costs["gpu"]["ml_units_per_hour"] == pytest.approx(15.8344)
    assert "ML units from the 2018-01-01 table" in costs["gpu"]["price_note"]
    assert costs["laptop"]["usd_per_hour"] is None and costs["laptop"]["price_date_origin"] == "today"


def test_a_run_dated_only_by_its_step_records_is_priced_on_its_first_records_day() -> None:
    from datetime import datetime

    from tierscope.analysis.analyze import with_log_dates

    runs = pl.DataFrame(
        {"run_id": ["dated", "by_event", "by_record", "untimed"],
         "date": [date(2020, 1, 1), None, None, None]}
    )  # fmt: skip
    events = pl.DataFrame(
        {"run_id": ["by_event"], "timestamp": [datetime(2018, 6, 1, 12)]},
        schema={"run_id": pl.String, "timestamp": pl.Datetime("us", "UTC")},
    )
    # by_record's records: its first timed one is on 2019-03-05 (UTC), the one without a time counts for nothing;
    # by_event's records (2025) never beat its event; dated keeps its own date
    steps = pl.LazyFrame(
        {"run_id": ["by_record", "by_record", "by_record", "by_event", "untimed"],
         "timestamp": [datetime(2019, 3, 6, 1), datetime(2019, 3, 5, 23, 59, 58), None, datetime(2025, 1, 1), None]},
        schema={"run_id": pl.String, "timestamp": pl.Datetime("us", "UTC")},
    )  # fmt: skip
    dated = {r["run_id"]: (r["date"], r["date_origin"]) for r in with_log_dates(runs, events, steps).to_dicts()}
    assert dated == {
        "dated": (date(2020, 1, 1), "run"),
        "by_event": (date(2018, 6, 1), "log"),
        "by_record": (date(2019, 3, 5), "log"),
        "untimed": (None, None),
    }


def test_a_legacy_run_dated_before_the_ml_unit_table_has_no_price_and_says_why() -> None:
    # ml_units.csv's first rows: BASIC from 2016-01-01 (the 2016 beta), BASIC_GPU and the machine type
    # standard_gpu from 2018-01-01. A run of 1999-05-01 has no ML units and no USD: the note names its
    # date and that first row; a BASIC_GPU run of 2017-06-01 likewise names 2018-01-01.
    runs = pl.DataFrame(
        {"run_id": ["y1999", "gpu2017", "custom1999", "y2016"],
         "tier": ["BASIC", "BASIC_GPU", "CUSTOM", "BASIC"],
         "date": [date(1999, 5, 1), date(2017, 6, 1), date(1999, 5, 1), date(2016, 12, 31)],
         "topology": [None, None, json.dumps({"master": {"machine_type": "standard_gpu", "count": 1}}), None]},
        schema_overrides={"date": pl.Date, "topology": pl.String},
    )  # fmt: skip
    rows = {r["run_id"]: r for r in run_costs(runs, ON).to_dicts()}
    old = rows["y1999"]
    assert old["ml_units_per_hour"] is None and old["usd_per_hour"] is None and old["price_stale"] is False
    assert old["price_note"] == (
        "no price on 1999-05-01: the ML-unit table's earliest row for BASIC is from 2016-01-01; check the date of "
        "the run's records, or describe the run's machines (--machine, --job-spec) and give their prices with "
        "--prices FILE"
    )
    assert rows["gpu2017"]["price_note"].startswith(
        "no price on 2017-06-01: the ML-unit table's earliest row for BASIC_GPU is from 2018-01-01;"
    )
    assert rows["custom1999"]["price_note"].startswith(
        "no price on 1999-05-01: the ML-unit table's earliest row for its machine types is from 2018-01-01;"
    )
    # a 2016 run has its ML units (1 for BASIC) and, the beta quoting no dollar price, no USD: no note
    assert rows["y2016"]["ml_units_per_hour"] == 1 and rows["y2016"]["price_note"] is None
