"""Hostile price files and manifests: rows that contradict each other, booleans and date-times where
numbers and dates belong, prices out of any sane range, a byte-order mark. Each is a one-line error
naming the file and the line (or the TOML table), or is read as meant."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tierscope.analysis import machines as m
from tierscope.analysis import prices as p
from tierscope.analysis import quotas

HEADER = "resource,region,pricing,usd_per_hour,valid_from,source\n"
T4 = "NVIDIA_TESLA_T4,us-central1,on-demand,{},2026-07-30,x\n"


def _toml(usd: str = "0.35", valid: str = "2026-07-30", table: str = "price") -> str:
    return (
        f'[[{table}]]\nresource = "NVIDIA_TESLA_T4"\nregion = "us-central1"\npricing = "on-demand"\n'
        f'usd_per_hour = {usd}\nvalid_from = {valid}\nsource = "x"\n'
    )


def test_two_rows_pricing_the_same_thing_differently_name_both_lines(tmp_path: Path) -> None:
    csv = tmp_path / "ours.csv"
    csv.write_text(
        HEADER + T4.format("0.35") + "n1-standard-8,us-central1,on-demand,0.38,2026-07-30,x\n" + T4.format("0.36")
    )
    with pytest.raises(p.PriceFileError) as told:
        p.load_file(csv)
    assert str(told.value) == (
        f"{csv}:4: NVIDIA_TESLA_T4 us-central1 on-demand from 2026-07-30 costs 0.36/h here but 0.35/h at {csv}:2; "
        "keep one of the two rows"
    )
    toml = tmp_path / "ours.toml"
    toml.write_text(_toml("0.35") + _toml("0.4"))
    with pytest.raises(
        p.PriceFileError, match=rf"{toml}:price\[2\]: .* costs 0.4/h here but 0.35/h at {toml}:price\[1\]"
    ):
        p.load_file(toml)
    # the same row twice says the same thing: no conflict
    csv.write_text(HEADER + T4.format("0.35") + T4.format("0.350"))
    assert len(p.load_file(csv)) == 2


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (_toml(usd="true"), "usd_per_hour true is not a number"),
        (
            _toml(valid="2026-10-01T10:00:00Z"),
            "valid_from 2026-10-01T10:00:00+00:00 is a date and time; give the day alone, like 2026-10-01",
        ),
        (_toml(usd="1e308"), "usd_per_hour 1e+308 is not a price; give a number from 0 to 10,000 USD an hour"),
        (_toml(usd="nan"), "usd_per_hour nan is not a price"),
        (_toml(usd="inf"), "usd_per_hour inf is not a price"),
        (_toml(usd="-1"), "usd_per_hour -1 is not a price"),
    ],
)
def test_a_toml_value_of_the_wrong_kind_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    toml = tmp_path / "ours.toml"
    toml.write_text(text)
    with pytest.raises(p.PriceFileError) as told:
        p.load_file(toml)
    assert str(told.value).startswith(f"{toml}:price[1]: {said}")


@pytest.mark.parametrize(
    ("usd", "said"),
    [
        ("1e308", "usd_per_hour 1e308 is not a price; give a number from 0 to 10,000 USD an hour"),
        ("10000.01", "usd_per_hour 10000.01 is not a price"),
        ("0.1e-400", "usd_per_hour 0.1e-400 is too small to be a price (it reads as 0); write 0 for a free resource"),
        ("Infinity", "usd_per_hour Infinity is not a price"),
        ("0x10", "usd_per_hour '0x10' is not a number"),
    ],
)
def test_an_absurd_price_in_a_csv_is_refused(tmp_path: Path, usd: str, said: str) -> None:
    csv = tmp_path / "ours.csv"
    csv.write_text(HEADER + T4.format(usd))
    with pytest.raises(p.PriceFileError) as told:
        p.load_file(csv)
    assert str(told.value).startswith(f"{csv}:2: {said}")


def test_the_bound_itself_and_zero_are_prices(tmp_path: Path) -> None:
    csv = tmp_path / "ours.csv"
    csv.write_text(HEADER + T4.format("10000") + "n1-standard-8,us-central1,on-demand,0,2026-07-30,free\n")
    assert [r.usd_per_hour for r in p.load_file(csv)] == [10_000.0, 0.0]


def test_a_price_csv_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    csv = tmp_path / "excel.csv"
    csv.write_bytes(b"\xef\xbb\xbf" + (HEADER + T4.format("0.41")).encode())
    table = p.PriceTable.with_files([csv])
    # 1 x n1-standard-8 (shipped row) + 1 x the file's T4 at 0.41
    hw = m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1),))
    used = {u.row.resource: u.row.usd_per_hour for u in p.quote(hw, date(2026, 11, 20), "us-central1", table).rows}
    assert used["NVIDIA_TESLA_T4"] == 0.41


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("prices = 5\n", "'prices' must be a price file's path, a list of them, or [[prices]] tables"),
        ("prices = [5]\n", "'prices' must be a price file's path"),
        (
            _toml(valid="2026-10-01T10:00:00Z", table="prices"),
            "prices:price[1]: valid_from 2026-10-01T10:00:00+00:00 is a date and time",
        ),
        (_toml(usd="true", table="prices"), "prices:price[1]: usd_per_hour true is not a number"),
    ],
)
def test_a_manifests_prices_of_the_wrong_kind_are_one_line(tmp_path: Path, text: str, said: str) -> None:
    manifest = tmp_path / "runs.toml"
    manifest.write_text(text)
    with pytest.raises((p.PriceFileError, quotas.QuotaError)) as told:
        quotas.manifest_extras(manifest)
    assert str(told.value).startswith(f"{manifest}: {said}")


def test_a_quota_of_true_is_not_one(tmp_path: Path) -> None:
    manifest = tmp_path / "runs.toml"
    manifest.write_text("[quotas]\nNVIDIA_A100_GPUS = true\n")
    asked, _, _ = quotas.manifest_extras(manifest)
    with pytest.raises(quotas.QuotaError) as told:
        quotas.parse(asked, f"{manifest}: quotas")
    assert (
        str(told.value) == f"{manifest}: quotas NVIDIA_A100_GPUS=true: the limit is not a number; give a count like 8"
    )
