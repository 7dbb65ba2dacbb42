"""The CLI on the bundled 2016 data: demo, collect, summary --json, report."""

from __future__ import annotations

import json
import re
import shutil
from importlib.resources import as_file
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import BASIC, STANDARD_1
from tierscope import Dataset, demo
from tierscope.cli import app

runner = CliRunner()


def test_demo_writes_dataset_report_and_prints_summary(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path), "--lang", "en"])
    assert result.exit_code == 0, result.output
    # the steady rates of tests/analysis/test_summary_2016.py: 22.389, 4.640, 18.838
    assert "22.389" in result.output and "4.640" in result.output and "18.838" in result.output
    html = (tmp_path / "report.html").read_text()
    for run in ("local", "basic", "standard_1", "premium_1"):
        assert f">{run}<" in html
    assert 'class="failed"' in html and "gcloud crashed (BadStatusCodeError)" in html
    # a second demo adds nothing
    again = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert "stored 0 step records" in again.output


def test_the_demo_reads_its_logs_whole_however_new_their_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a fresh checkout's logs changed seconds ago; their jobs ended in 2016: nothing is left for a later collect
    fresh = tmp_path / "bundled"
    with as_file(demo.BUNDLED) as bundled:
        shutil.copytree(bundled, fresh, copy_function=shutil.copyfile)  # copyfile: the copies' times are now
    monkeypatch.setattr(demo, "BUNDLED", fresh)
    done = demo.run_demo(tmp_path / "out", "en")
    assert all(not s.notes for s in done.collected.sources), [s.notes for s in done.collected.sources]
    # premium_1's log ends in its failure (its last line): read, the run failed
    premium = done.summary.filter(run_id="premium_1").row(0, named=True)
    assert premium["status"] == "failed" and "gcloud crashed (BadStatusCodeError)" in premium["failure_reason"]


def test_summary_json_has_the_documented_keys(tmp_path: Path, bundled_manifest: Path) -> None:
    ds = tmp_path / "ds"
    assert runner.invoke(app, ["collect", "files", "--manifest", str(bundled_manifest), "-d", str(ds)]).exit_code == 0
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    runs = {r["run_id"]: r for r in json.loads(result.output)}
    keys = {"run_id", "tier", "status", "records", "tasks", "steady_global_steps_per_s", "mean_global_steps_per_s",
            "ml_units_per_hour", "steps_per_ml_unit_hour", "speedup_vs_baseline", "baseline_run_id",
            "failure_reason"}  # fmt: skip
    assert all(keys <= set(r) for r in runs.values())
    assert runs["standard_1"]["speedup_vs_baseline"] == pytest.approx(STANDARD_1 / BASIC)  # 22.389 / 4.640
    assert runs["premium_1"]["status"] == "failed"


def test_malformed_lines_are_kept_aside_and_counted(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (5.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
        "Train [master/0], step 200:loss:2.2, accuracy:0.2 (10.0 sec) 20.0 glo\n"  # truncated
        "\x00\x01 binary garbage \xff\n"
        "Train [master/0], step -5:loss:2.2, accuracy:0.2 (10.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
        "Train [master/0], step 300:loss:2.1, accuracy:0.3 (15.0 sec) nan global_steps/s, 20.0 local_steps/s\n"
        "Train [master/0], step 400:loss:2.0, accuracy:0.3 (20.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n",
        encoding="latin-1",
    )
    ds = tmp_path / "ds"
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "r", "--tier", "BASIC"])
    assert result.exit_code == 0, result.output
    assert "kept aside 3 rejected lines" in result.output
    assert "stored 2 step records" in result.output
    listing = runner.invoke(app, ["rejects", "-d", str(ds)])
    assert listing.exit_code == 0
    for line_no in (2, 4, 5):
        assert f"bad.log:{line_no}" in listing.output
    assert "3 rejected lines" in listing.output


def test_report_is_offline_and_escapes_hostile_run_ids(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        "".join(
            f"Train [master/0], step {s}:loss:2.0, accuracy:0.5 ({s / 10:.1f} sec) 10.0 global_steps/s, "
            "10.0 local_steps/s\n"
            for s in (100, 200, 300)
        )
    )
    ds = tmp_path / "ds"
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    assert (
        runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", evil, "--tier", "BASIC"]).exit_code
        == 0
    )
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", "-d", str(ds), "-o", str(out), "--lang", "en"])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text in the table
    # nothing is loaded from the network: no src= or href= pointing at http(s)
    assert not re.search(r"""(src|href)\s*=\s*["']?https?://""", html)
    assert html.count("<script") == 2  # the inline Vega bundle and the inline chart code


def test_errors_are_one_line_with_exit_codes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["summary", "-d", str(tmp_path / "none")])
    assert result.exit_code == 1 and "none does not exist; check the path" in " ".join(result.output.split())
    result = runner.invoke(app, ["collect", "files", str(tmp_path / "missing.log"), "-d", str(tmp_path / "ds")])
    missing = tmp_path / "missing.log"
    # one wording for a missing log wherever it is named (it was "no such file or directory: PATH" here)
    assert result.exit_code == 1
    assert f"cannot read {missing}: no such file or directory; check the path" in " ".join(result.output.split())


def test_a_file_with_nothing_tierscope_reads_gets_a_warning(tmp_path: Path) -> None:
    # two lines with no metric: counted as skipped (nothing lost), and the user is told why
    log = tmp_path / "notes.txt"
    log.write_text("hello\nworld\n")
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 0
    assert "none of its 2 lines is a step record" in result.output
    assert "2 lines had no metric" in result.output


def test_a_last_line_read_later_from_a_step_log_gets_no_warning(tmp_path: Path) -> None:
    # two step records and a last line with no newline, written to a followed log and collected at once (not
    # settled): the line is left
    # for the next collect, which is told how to read it now; collected again settled, that one line holds
    # no metric, but the file gave records: it is a step log, so no "is it a step log?" warning
    log = tmp_path / "g.log"
    ds = str(tmp_path / "ds")
    log.touch()  # cron's first collect finds the job's log just created: followed from then on
    assert runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--settle", "3600"]).exit_code == 0
    log.write_text(
        "Train [master/0], step 100 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
        "Train [master/0], step 200 (2.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
        "all done"
    )
    first = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--settle", "3600"])
    assert first.exit_code == 0
    said = " ".join(first.output.split())
    assert (
        "g.log: the file changed 0 s ago: its last line (3) may still be completed by lines not written yet, and is "
        "read once it settles (--settle 3600 s), or now with --settle 0" in _no_age(said)
    ), first.output
    second = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--settle", "0"])
    assert second.exit_code == 0
    assert "1 line had no metric" in second.output
    assert "is it a step log" not in second.output


def _no_age(said: str) -> str:
    """``said`` with a held note's age as 0 s: the seconds between writing a file and collecting it vary."""
    return re.sub(r"changed \d+ s ago", "changed 0 s ago", said)


#: A job's log that ends in a failure: two step records, then a traceback whose last line (its exception) may
#: still be followed by the lines of an exception chained to it, for all a collect right after it was written knows.
FAILED_LOG = (
    "Train [master/0], step 100 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
    "Train [master/0], step 200 (2.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
    "Traceback (most recent call last):\n"
    '  File "trainer/task.py", line 10, in <module>\n'
    "    main()\n"
    "ResourceExhaustedError: OOM when allocating tensor with shape[512,1024]\n"
)


def test_a_log_collected_right_after_its_job_wrote_it_says_what_it_left_unread(tmp_path: Path) -> None:
    log, ds = tmp_path / "job.log", str(tmp_path / "ds")
    log.touch()  # cron's first collect finds the job's log just created: followed from then on
    created = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "r", "--tier", "BASIC"])
    assert created.exit_code == 0, created.output
    log.write_text(FAILED_LOG)
    # formats --try is no collect: it reads the file whole, the failure with it
    tried = runner.invoke(app, ["formats", "--try", str(log)])
    assert tried.exit_code == 0, tried.output
    assert "failed" in tried.output and "OOM when allocating" in tried.output, tried.output
    first = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "r", "--tier", "BASIC"])
    assert first.exit_code == 0, first.output
    said = _no_age(" ".join(first.output.split()))
    # lines 1-5 read; line 6, the exception, held (one line), said in one line naming the file
    assert "read 5 lines: stored 2 step records" in said, first.output
    assert (
        "job.log: the file changed 0 s ago: its last line (6) may still be completed by lines not written yet, "
        "and is read once it settles (--settle 300 s), or now with --settle 0" in said
    ), first.output
    # the summary does not know the failure yet, and says why
    summary = runner.invoke(app, ["summary", "-d", ds], env={"COLUMNS": "200"})  # its status cell on one line
    assert summary.exit_code == 0, summary.output
    flat = " ".join(summary.output.split())
    assert "no end logged" in flat and "failed" not in flat.replace("failure's", ""), summary.output
    assert (
        f"note: run r: its last collect of {log} left line 6 unread: the file was still being written and it "
        "may be completed by lines not yet written" in flat
    ), summary.output
    # read now: the failure is the run's status, and nothing is left unread
    again = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "r", "--settle", "0"])
    assert again.exit_code == 0, again.output
    assert "read 1 line" in again.output and "may still be completed" not in again.output, again.output
    summary = runner.invoke(app, ["summary", "-d", ds])
    flat = " ".join(summary.output.split())
    assert "failed" in flat and "left line" not in flat, summary.output


def test_a_tier_the_price_table_does_not_know_gets_a_note(tmp_path: Path) -> None:
    log = tmp_path / "g.log"
    log.write_text(
        "Train [master/0], step 100 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
        "Train [master/0], step 200 (2.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
    )
    ds = str(tmp_path / "ds")
    assert runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--tier", "GIGANTIC", "-q"]).exit_code == 0
    result = runner.invoke(app, ["summary", "-d", ds, "--json"])
    assert result.exit_code == 0
    assert "tier 'GIGANTIC' of run 'g' has no row in the price table" in result.output


def test_a_missing_path_among_several_does_not_stop_the_others(tmp_path: Path) -> None:
    # `collect files typo.log good.log` stopped at the typo and stored nothing of good.log (a manifest's
    # missing file never stopped its other runs)
    good = tmp_path / "good.log"
    good.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (5.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
    )
    typo = tmp_path / "typo.log"
    result = runner.invoke(app, ["collect", "files", str(typo), str(good), "-d", str(tmp_path / "ds"), "-q"])
    assert result.exit_code == 1
    assert f"cannot read {typo}: no such file or directory; check the path" in " ".join(result.output.split())
    assert Dataset(tmp_path / "ds").read("steps")["run_id"].to_list() == ["good"]  # named after the file read


def test_a_baseline_picked_without_a_basic_run_says_why(tmp_path: Path) -> None:
    # with no BASIC run the speedup was "against case03" with nothing saying why that run
    line = "Train [master/0], step {}:loss:2.3, accuracy:0.1 ({} sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
    log = tmp_path / "laptop.log"
    log.write_text("".join(line.format(100 * i, 5.0 * i) for i in (1, 2, 3)))
    # and a second machine of the job (one run alone has no speedup to say anything of: tests/cli/test_summary_one_run)
    server = tmp_path / "server.log"
    server.write_text("".join(line.format(100 * i, 2.5 * i).replace("20.0", "40.0") for i in (1, 2, 3)))
    for path in (log, server):
        assert runner.invoke(app, ["collect", "files", str(path), "-d", str(tmp_path / "ds"), "-q"]).exit_code == 0
    said = " ".join(runner.invoke(app, ["summary", "-d", str(tmp_path / "ds")]).output.split())
    assert (
        "note: the speedup is against laptop: no run has the cloud tier BASIC, so the measured "
        "run with the lowest price per hour (else the fewest training tasks) is the baseline; choose one with "
        "--baseline RUN_ID"
    ) in said
    # a local run of the BASIC topology called basic: the note names its tier, not "no BASIC run" of it
    for path, run in ((log, "basic"), (server, "server")):
        assert runner.invoke(
            app, ["collect", "files", str(path), "-d", str(tmp_path / "ds2"), "-q", "--run-id", run,
                  "--tier", "local-BASIC"]
        ).exit_code == 0  # fmt: skip
    local = " ".join(runner.invoke(app, ["summary", "-d", str(tmp_path / "ds2")]).output.split())
    assert "note: the speedup is against basic (tier local-BASIC): no run has the cloud tier BASIC" in local
    chosen = " ".join(
        runner.invoke(app, ["summary", "-d", str(tmp_path / "ds"), "--baseline", "laptop"]).output.split()
    )
    assert "no BASIC run" not in chosen
