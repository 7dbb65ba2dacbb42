"""``tierscope sweep --dry-run``: each configuration's estimate from the cited price rows, the total, and the
budget's and the price table's refusals before anything is submitted."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.support.cli_helpers import table_row
from tests.sweep.plans import three_configurations
from tierscope.cli import app

runner = CliRunner()

PLAN = three_configurations('id = "calib"\nregion = "us-central1"')


def dry_run(tmp_path: Path, text: str, *options: str) -> tuple[int, str, str]:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["sweep", str(path), "--dry-run", *options], env={"COLUMNS": "250"})
    return result.exit_code, result.stdout, result.stderr


def test_estimates_are_the_cited_rows_times_replicas_times_the_time_cap(tmp_path: Path) -> None:
    code, out, err = dry_run(tmp_path, PLAN)
    assert code == 0, err
    # analysis/data/prices.csv, us-central1 on-demand, valid from 2026-07-30:
    #   n1-standard-4 0.189999/h, n1-standard-8 0.379998/h, NVIDIA_TESLA_T4 0.35/h. Each run at most 10 min = 1/6 h.
    # BASIC: 1 x n1-standard-4 = 0.189999/h -> 0.0316665
    # STANDARD_1: (1 chief + 4 workers + 3 ps) x n1-standard-4 = 8 x 0.189999 = 1.519992/h -> 0.253332
    # three-workers: 4 x (n1-standard-8 0.379998 + T4 0.35) = 2.919992/h -> 0.48666533
    # total 0.0316665 + 0.253332 + 0.48666533 = 0.77166383
    assert table_row(out, "BASIC")[2:5] == ["0.189999", "0.1667", "0.0317"]
    assert table_row(out, "STANDARD_1")[2:6] == ["1.519992", "0.1667", "0.2533", "1 x [1], 4 x [1], 3 x [1]"]
    rows = "1 x [2], 1 x [3], 3 x [2], 3 x [3]"
    assert table_row(out, "three-workers")[2:6] == ["2.919992", "0.1667", "0.4867", rows]
    assert "total: $0.7717" in out
    assert "[1] n1-standard-4 us-central1 on-demand 0.189999/h from 2026-07-30 (Compute Engine price" in out
    assert "[2] n1-standard-8 us-central1 on-demand 0.379998/h from 2026-07-30" in out
    assert "[3] NVIDIA_TESLA_T4 us-central1 on-demand 0.35/h from 2026-07-30" in out


def test_a_budget_below_one_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, _, err = dry_run(tmp_path, PLAN, "--budget", "0.03")
    assert code == 2
    assert err.strip().splitlines() == [
        "error: budget $0.03 is below one run: BASIC alone is estimated at $0.03; raise --budget or shorten [run] "
        "minutes. Nothing was submitted"
    ]


def test_an_unpriced_configuration_is_refused_unless_allowed(tmp_path: Path) -> None:
    # g2-standard-48 is a machine type tierscope knows (machines.csv) with no us-central1 price row
    text = PLAN + '\n[[configuration]]\nname = "big-g2"\nmachine_type = "g2-standard-48"\n'
    code, out, err = dry_run(tmp_path, text)
    assert code == 2 and "configuration big-g2: no estimate (no price row for g2-standard-48 (us-central1" in err
    assert "--allow-unpriced" in err
    code, out, _ = dry_run(tmp_path, text, "--allow-unpriced")
    assert code == 0 and "total: at least $0.7717 (some unpriced)" in out
    assert table_row(out, "big-g2")[4] == "unpriced"


def test_a_budget_not_a_finite_amount_is_refused_before_anything(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(PLAN, encoding="utf-8")
    for budget in ("nan", "inf"):
        result = CliRunner().invoke(app, ["sweep", str(path), "--budget", budget, "--local"], env={"COLUMNS": "250"})
        assert result.exit_code == 2, result.output
        # the number options' one error line (tierscope/cli/number_options.py), under click's usage lines
        said = result.stderr.strip().splitlines()[-1]
        assert (
            said == f"Error: Invalid value for '--budget': {budget} is not a finite number; "
            "give one of at least 0 (see --help)"
        )
    # nothing ran: no ledger, no dataset, no local job
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.toml"]
