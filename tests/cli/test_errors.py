"""Hostile input to the CLI: each gives one line on stderr, the documented exit code and no traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import write_steps
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.demo import BUNDLED
from tierscope.trainer.spec import BUILD_COMMANDS

runner = CliRunner()
TIERSCOPE = str(Path(sys.executable).with_name("tierscope"))


def _squeezed(text: str) -> str:
    """``text`` without whitespace or box borders: typer wraps usage errors in a box at any space."""
    return "".join(text.replace("│", "").split())


def _one_line_error(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "Traceback" not in output
    return lines[0]


def test_rejects_and_compact_on_a_missing_dataset_fail_and_create_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    for command in (["rejects"], ["compact"]):
        result = runner.invoke(app, [*command, "-d", str(missing)])
        assert result.exit_code == 1
        line = _one_line_error(result.output)
        # a path that is not there is most likely mistyped ("holds no tierscope dataset" read as "collect first")
        assert line == f"error: {missing} does not exist; check the path, or run `tierscope collect files` to make it"
    assert not missing.exists()  # compact used to create it (and its .lock) and report success


def test_rejects_on_a_dataset_that_is_a_file_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    result = runner.invoke(app, ["rejects", "-d", str(afile)])
    assert result.exit_code == 1  # was NotADirectoryError from state/compactions.json
    assert _one_line_error(result.output) == (
        f"error: {afile} is a file, not a dataset directory; pass --dataset a directory"  # as collect says
    )


def test_collect_into_a_dataset_path_that_is_a_file_says_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    log = tmp_path / "a.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.2 (21.5 sec) 4.644 global_steps/s, 4.644 local_steps/s\n"
    )
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(afile)])
    assert result.exit_code == 1  # was "cannot write or read afile: File exists"
    assert _one_line_error(result.output) == (
        f"error: {afile} is a file, not a dataset directory; pass --dataset a directory"
    )
    assert afile.read_text() == "hi\n"


def test_report_out_naming_a_directory_is_a_usage_error(tmp_path: Path, dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["report", "-d", str(dataset_2016.root), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output  # was IsADirectoryError
    expected = (
        f"Invalid value for --out: {tmp_path} is a directory; give the HTML file to write, e.g. {tmp_path}/report.html"
    )
    assert _squeezed(expected) in _squeezed(result.output)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_says_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    # /dev/full answers every write with the kernel's ENOSPC, as a full disk does; the line said
    # "cannot write or read FILE: No space left on device" and stopped there
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full (Linux) to stand for a full disk")
    from tierscope.cli.common import print_error

    with pytest.raises(OSError) as full, open("/dev/full", "wb", buffering=0) as f:
        f.write(b"x")
    full.value.filename = "/data/ds/steps/part-1.parquet"  # the kernel names no file; the dataset's writers do
    assert print_error(full.value) == 1
    assert _one_line_error(capsys.readouterr().err) == (
        "error: cannot write or read /data/ds/steps/part-1.parquet: No space left on device: free space on that "
        "disk (or write elsewhere), then run the command again (nothing half-written was kept)"
    )


# The commands in a child whose files may not pass 8 KiB (`ulimit -f 8`): a write past it fails with
# the kernel's EFBIG, in pyarrow's writer and in Python's alike, where a full disk's fails with ENOSPC.
_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
from tierscope.cli import main
sys.argv = ["tierscope", *sys.argv[1:]]
main()
"""
#: A data file's name before its digest is added: what a failed write names (tierscope.dataset.store).
PART = r"part-\d{8}T\d{12}Z-[0-9a-f]{12}\.parquet"
AGAIN = "then run the command again (nothing half-written was kept)"
TOO_LARGE = (
    "File too large: a file size limit stopped the write (the file system's largest file, or `ulimit -f`): "
    f"raise it or write elsewhere, {AGAIN}"
)


def _limited(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _LIMITED, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX resource limits")
def test_a_data_file_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    log, ds = tmp_path / "a.log", tmp_path / "ds"
    write_steps(log, range(1, 2001))  # some 20 kB of Parquet
    done = _limited("collect", "files", str(log), "-d", str(ds), "--run-id", "r", "-q")
    # was: "error: cannot write or read: Error writing bytes to file. Detail: [errno 27] File too large: ..."
    expected = re.escape(f"error: cannot write or read {ds}/steps/run_id=r/") + PART + re.escape(f": {TOO_LARGE}\n")
    assert (done.returncode, done.stdout) == (1, "") and re.fullmatch(expected, done.stderr), done.stderr
    assert Dataset(ds).temp_files() == [] and Dataset(ds).files("steps") == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX resource limits")
def test_a_report_that_cannot_be_written_names_out_not_its_temporary_file(
    tmp_path: Path, dataset_2016: Dataset
) -> None:
    out = tmp_path / "r.html"  # some 1 MB
    done = _limited("report", "-d", str(dataset_2016.root), "--out", str(out), "--lang", "en")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: cannot write or read {out}: {TOO_LARGE}\n")
    assert list(tmp_path.iterdir()) == []


def _in_a_tmpfs(options: str, at: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tierscope ARGS`` with a tmpfs mounted at ``at`` (``mount -o options``), in a mount namespace of
    its own: a user namespace's, which needs no root where the kernel allows it (skipped where not)."""
    own = ["unshare", "--user", "--map-root-user", "--mount"]
    try:
        usable = subprocess.run([*own, "true"], capture_output=True, timeout=60).returncode == 0
    except FileNotFoundError:  # no unshare (util-linux)
        usable = False
    if not usable:
        pytest.skip("needs a user namespace (unshare --user --mount) to mount a tmpfs of its own")
    mount = 'mount -t tmpfs -o "$1" tierscope-test "$2" && shift 2 && exec "$@"'
    at.mkdir()
    command = [*own, "sh", "-c", mount, "sh", options, str(at), TIERSCOPE, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_report_on_a_read_only_file_system_names_out(tmp_path: Path, dataset_2016: Dataset) -> None:
    out = tmp_path / "ro" / "r.html"
    done = _in_a_tmpfs("ro", out.parent, "report", "-d", str(dataset_2016.root), "--out", str(out), "--lang", "en")
    # was: the temporary file's name (removing it failed with EROFS too, and that error was the one shown)
    remedy = "that file system is read-only: use a dataset or an output on a writable one"
    expected = f"error: cannot write or read {out}: Read-only file system: {remedy}\n"
    assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)


def test_a_collect_into_a_full_file_system_names_the_data_file(tmp_path: Path) -> None:
    log, ds = tmp_path / "a.log", tmp_path / "full" / "ds"
    write_steps(log, range(1, 2001))  # some 20 kB of Parquet, for 8 kB of room
    done = _in_a_tmpfs("size=8k", ds.parent, "collect", "files", str(log), "-d", str(ds), "--run-id", "r", "-q")
    remedy = f"free space on that disk (or write elsewhere), {AGAIN}"
    expected = re.escape(f"error: cannot write or read {ds}/steps/run_id=r/") + PART
    expected += re.escape(f": No space left on device: {remedy}\n")
    assert (done.returncode, done.stdout) == (1, "") and re.fullmatch(expected, done.stderr), done.stderr


def test_report_out_under_a_file_is_one_line_and_leaves_no_temporary_file(
    tmp_path: Path, dataset_2016: Dataset
) -> None:
    plain = tmp_path / "plainfile"
    plain.write_text("hi\n")
    result = runner.invoke(app, ["report", "-d", str(dataset_2016.root), "--out", str(plain / "r.html")])
    assert result.exit_code == 1  # was FileExistsError from mkdir
    assert _one_line_error(result.output) == (
        f"error: cannot write or read {plain}: File exists: a file stands where a folder is needed: choose another path"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plainfile"]


def test_an_unknown_region_is_a_usage_error(dataset_2016: Dataset) -> None:
    # predict prices nothing (it fits throughput): it has no --region
    for command in (["summary"], ["report"], ["recommend", "--steps", "10", "--budget", "5"]):
        result = runner.invoke(app, [*command, "-d", str(dataset_2016.root), "--region", "mars"])
        # was exit 0 with every USD column silently empty
        assert result.exit_code == 2, (command, result.output)
        expected = (
            "Invalid value for '--region': unknown region 'mars': neither a region of the price rows nor a "
            "Google Cloud region like us-central1; known: asia, europe, us, europe-west4, us-central1, us-central2"
        )
        assert _squeezed(expected) in _squeezed(result.output)


def test_a_known_region_still_prices(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--region", "europe", "--json"])
    assert result.exit_code == 0, result.output


def test_recommend_with_no_timed_run_says_so_rather_than_blaming_prices(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("ERROR: gcloud crashed (BadStatusCodeError):\n")  # a failed run: an event, no step record
    ds = tmp_path / "ds"
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "-q"]).exit_code == 0
    result = runner.invoke(app, ["recommend", "-d", str(ds), "--steps", "10", "--budget", "5"])
    assert result.exit_code == 1
    # was "no candidate has a price on that date and region (the 2016 beta table ...)"; the failed run is named
    assert _one_line_error(result.output) == (
        "error: no run that finished has a steady-state rate to plan from; a failed run is evidence, not a "
        "candidate (run a failed on its machines with gcloud crashed (BadStatusCodeError)): collect the step "
        "logs of a run that finished"
    )


def test_recommend_on_runs_without_a_tier_asks_for_one_not_a_laptop(dataset_2016: Dataset, tmp_path: Path) -> None:
    # the 2016 BASIC log collected without --tier: a cloud run with no tier, not one that "ran locally"
    ds = tmp_path / "ds"
    log = BUNDLED / "basic.log"
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "job42", "-q"]).exit_code == 0
    result = runner.invoke(app, ["recommend", "-d", str(ds), "--steps", "1000", "--deadline", "1h"])
    assert result.exit_code == 1
    assert _one_line_error(result.output) == (
        "error: no measured run has machines to price (none: job42): collect its logs again with what it ran on, "
        "--machine TYPE [--accelerator TYPE:N] or --tpu SLICE (a legacy scale tier: --tier TIER; or a manifest's "
        "keys), or use `tierscope predict` for throughput alone"
    )
    # the laptop run keeps its own reason
    local = runner.invoke(app, ["recommend", "-d", str(dataset_2016.root), "--runs", "local", "--steps", "1000",
                                "--deadline", "1h"])  # fmt: skip
    assert local.exit_code == 1 and "every measured run (local) ran locally" in local.output


@pytest.mark.parametrize(
    ("args", "option", "bound"),
    [
        # printed "first -1 shown"
        (["rejects", "--limit", "-1"], "--limit", "-1 is too small; give one of at least 0, like its default 50"),
        (
            ["collect", "files", "a.log", "--settle", "-5"],
            "--settle",
            "-5 is too small; give one from 0 to 1,000,000,000",
        ),
        (["collect", "files", "a.log", "--year", "99999"], "--year", "99999 is too large; give one from 1 to 9999"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(tmp_path: Path, args: list[str], option: str, bound: str) -> None:
    # click's range check in the project's words (tierscope.cli.number_options); --year was stored before
    result = runner.invoke(app, [*args, "-d", str(tmp_path / "ds")])
    assert result.exit_code == 2
    assert _squeezed(f"Invalid value for '{option}': {bound}") in _squeezed(result.output)
    assert not (tmp_path / "ds").exists()


def test_both_targets_is_a_usage_error_saying_not_both(tmp_path: Path) -> None:
    # was "give one of --target-loss and --target-accuracy", read as "either is needed"
    result = runner.invoke(app, ["summary", "-d", str(tmp_path), "--target-loss", "2", "--target-accuracy", "0.9"])
    assert result.exit_code == 2
    assert _squeezed("give one of --target-loss and --target-accuracy, not both") in _squeezed(result.output)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("76", "76 is not an accuracy: give a fraction above 0 and at most 1 (76 % is 0.76)"),
        ("0", "0 is not an accuracy: give a fraction above 0 and at most 1"),
        ("-0.5", "-0.5 is not an accuracy: give a fraction above 0 and at most 1"),
        ("150", "150 is not an accuracy: give a fraction above 0 and at most 1"),
    ],
)
def test_an_accuracy_target_outside_0_1_is_a_usage_error(tmp_path: Path, value: str, said: str) -> None:
    # was accepted: a target of 2 read as "not reached" for every run, 0 as reached at the first record
    result = runner.invoke(app, ["summary", "-d", str(tmp_path), "--target-accuracy", value])
    assert result.exit_code == 2
    assert _squeezed(said) in _squeezed(result.output)


def test_without_dataset_the_error_names_the_default_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./dataset here
    result = runner.invoke(app, ["summary"])
    assert result.exit_code == 1
    # was "error: dataset holds no tierscope dataset; ..."
    assert _one_line_error(result.output) == (
        "error: dataset (the default --dataset; name yours with --dataset DIR) does not exist; check the path, "
        "or run `tierscope collect files` to make it"
    )
    assert not (tmp_path / "dataset").exists()


def test_the_default_dataset_is_never_made_inside_a_folder_of_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from a checkout, ./dataset is the package's source folder: a collect without --dataset
    # scattered steps/, runs/, state/ among its modules.
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "dataset"
    source.mkdir()
    (source / "__init__.py").write_text("")
    (tmp_path / "a.log").write_text("")
    result = runner.invoke(app, ["collect", "files", "a.log", "--run-id", "r", "--settle", "0"])
    assert result.exit_code == 1
    assert _one_line_error(result.output) == (
        "error: dataset (the default --dataset) is a folder of other files (__init__.py), "
        "not a tierscope dataset; name a new folder with --dataset DIR"
    )
    assert sorted(p.name for p in source.iterdir()) == ["__init__.py"]
    # A folder the user names is theirs: the same folder given with --dataset is used.
    named = runner.invoke(app, ["collect", "files", "a.log", "--run-id", "r", "--settle", "0", "-d", str(source)])
    assert named.exit_code == 0, named.output


def test_a_reader_that_goes_away_is_no_error_message() -> None:
    # `tierscope dataset bigquery-ddl ... | head -1` printed "error: cannot write or read: Broken pipe".
    import subprocess
    import sys

    command = [sys.executable, "-m", "tierscope", "dataset", "bigquery-ddl", "-d", "gs://b/p", "--table", "p.d.steps"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # before the child (a Python start-up, ~0.3 s) writes a byte
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 1
    assert stderr == ""


def test_a_misspelt_log_format_is_refused_before_anything_is_read_or_recorded(tmp_path: Path) -> None:
    log = tmp_path / "basic.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.2 (21.5 sec) 4.644 global_steps/s, 4.644 local_steps/s\n"
    )
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "basic"\ntier = "BASIC"\nfiles = ["basic.log"]\ndate = 2016-12-31\n')
    ds = tmp_path / "ds"
    assert runner.invoke(app, ["collect", "files", "--manifest", str(manifest), "-d", str(ds), "-q"]).exit_code == 0
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--log-format", "cloudmel"])
    assert result.exit_code == 2
    line = _one_line_error(result.output)
    assert line.startswith("error: unknown log format 'cloudmel'; known formats: ")
    # it used to be collected first (a "read 0 lines" summary) and its facts recorded: the newest row,
    # tier and date unset, took over from the manifest's (BASIC, 2016-12-31)
    facts = Dataset(ds).read("runs")
    assert facts.select("run_id", "tier", "date").rows() == [("basic", "BASIC", date(2016, 12, 31))]


def test_spec_help_keeps_the_build_commands_whole_at_80_columns() -> None:
    # click's plain help rewraps every paragraph: at 80 columns the image name was cut at its hyphen
    # ("-t us-" / "central1-docker.pkg.dev/..."), a command that no longer pastes; each is one line now
    result = runner.invoke(app, ["spec", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    for command in BUILD_COMMANDS:
        assert f"  {command}" in lines, command


def test_report_out_naming_a_pipe_is_refused_and_the_pipe_kept(tmp_path: Path, dataset_2016: Dataset) -> None:
    # the report is renamed over --out: `--out /dev/full` made the device a regular file (exit 0)
    import os
    import stat

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = runner.invoke(app, ["report", "-d", str(dataset_2016.root), "--out", str(pipe)])
    assert result.exit_code == 2
    assert _squeezed(f"{pipe} is not a regular file (a device, a pipe or a socket)") in _squeezed(result.output)
    assert stat.S_ISFIFO(pipe.stat().st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_output_that_cannot_be_written_says_so_and_that_what_was_stored_is_kept(tmp_path: Path) -> None:
    # `collect ... > /dev/full` stored its records, then said "cannot write or read: No space left on device:
    # ... run the command again (nothing half-written was kept)": run again, it found nothing new to store.
    full = Path("/dev/full")
    if not (full.exists() and full.is_char_device()):
        pytest.skip("needs the /dev/full device (Linux) to stand for a full disk behind standard output")
    log = tmp_path / "steps.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (5.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
    )
    with full.open("w") as out:
        done = subprocess.run(
            [TIERSCOPE, "collect", "files", str(log), "-d", str(tmp_path / "ds")], stdout=out, stderr=subprocess.PIPE,
            text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: cannot write to standard output: No space left on device: what the command printed is lost "
        "(what it stored is kept); send its output where it can be written"
    )
    assert Dataset(tmp_path / "ds").read("steps").height == 1  # stored, once


def test_report_out_naming_a_link_writes_its_target_and_keeps_the_link(tmp_path: Path, dataset_2016: Dataset) -> None:
    # the report is renamed over --out: a link there was replaced by a regular file, its target never written
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.html"
    target.write_text('<!DOCTYPE html><meta name="generator" content="tierscope 0.0">old')  # an earlier report
    link = tmp_path / "link.html"
    link.symlink_to(target)
    result = runner.invoke(app, ["report", "-d", str(dataset_2016.root), "--out", str(link), "--lang", "en"])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    "command", [["summary"], ["recommend", "--steps", "1000", "--deadline", "72h"], ["report", "--out", "r.html"]]
)
def test_a_dataset_of_empty_logs_says_it_holds_no_runs_yet(tmp_path: Path, command: list[str]) -> None:
    # An empty log is collected (its place kept, nothing stored): the next command's error says why the dataset
    # holds nothing, not "run `tierscope collect files` first" (which was just run)
    log = tmp_path / "train.log"
    log.write_text("")
    ds = tmp_path / "ds"
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "-q"]).exit_code == 0
    result = runner.invoke(app, [*command, "-d", str(ds)])
    assert result.exit_code == 1
    assert _one_line_error(result.output) == (
        f"error: {ds} holds no runs yet: the logs collected into it had no lines to store (an empty log is "
        "followed); collect again once they have"
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        # the URL with no bucket: a path folds it to 'gs:', which was read as a local folder ("gs: does not exist")
        ("gs://", "'gs://' names no bucket; write gs://BUCKET/PREFIX"),
        # another store's URL, folded to 's3:/bucket/x', was "s3:/bucket/x does not exist; check the path"
        (
            "s3://bucket/x",
            "s3://bucket/x is no place tierscope keeps a dataset: give a local folder or gs://BUCKET/PREFIX",
        ),
        (
            "https://host/ds",
            "https://host/ds is no place tierscope keeps a dataset: give a local folder or gs://BUCKET/PREFIX",
        ),
    ],
)
def test_a_dataset_url_tierscope_cannot_use_says_what_it_can(given: str, said: str) -> None:
    result = runner.invoke(app, ["summary", "-d", given])
    assert result.exit_code == 1
    assert " ".join(result.output.split()) == f"error: {said}"


def test_a_local_folder_named_like_a_scheme_is_still_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # near miss: a relative folder 'c:' (no '//'), and a one-letter drive-like 'c:/x', are paths, not URLs
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["summary", "-d", "c:/x"])
    assert result.exit_code == 1
    assert " ".join(result.output.split()).startswith("error: c:/x does not exist")


@pytest.mark.parametrize(
    "command",
    [["collect", "files", "s3://bucket/train.log", "-d", "ds"], ["formats", "--try", "s3://bucket/train.log"]],
)
def test_a_log_in_another_store_is_said_to_be_there(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # was "cannot read s3:/bucket/train.log: no such file or directory; check the path" (the URL folded as a path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, command)
    assert result.exit_code == 1
    assert " ".join(result.output.split()).endswith(
        "error: cannot read s3://bucket/train.log: tierscope reads local files and gs:// objects; copy it to one"
    )
