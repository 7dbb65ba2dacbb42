"""``tierscope formats --try``: how each line of a file was read, and a verdict per file."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.collector.formats.test_formats_declared import README, TRAINER_LOG, readme_toml
from tests.support.cli_helpers import wrapped_rows
from tierscope.cli import app
from tierscope.collector.explain import explain_file
from tierscope.collector.formats import FORMATS
from tierscope.collector.formats.declared import load_formats
from tierscope.collector.formats.envelopes import ENVELOPES
from tierscope.text import printable

runner = CliRunner()


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The invented trainer log and the README's formats file."""
    log = tmp_path / "train.log"
    log.write_text("\n".join(TRAINER_LOG) + "\n", encoding="utf-8")
    toml = tmp_path / "my-formats.toml"
    toml.write_text(readme_toml(), encoding="utf-8")
    return log, toml


def _squeezed(text: str) -> str:
    """``text`` without whitespace: rich wraps cells at any space."""
    return "".join(text.split())


def table_rows(output: str) -> list[list[str]]:
    """The body rows of the rich table in ``output``, each cell's lines joined and squeezed (a row
    starts where its first cell is not empty)."""
    rows: list[list[str]] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        parts = [_squeezed(p) for p in line.split("│")[1:-1]]
        if parts[0] or not rows:
            rows.append(parts)
        else:
            rows[-1] = [cell + more for cell, more in zip(rows[-1], parts, strict=True)]
    return rows


def test_each_line_says_envelope_format_and_fields(files: tuple[Path, Path]) -> None:
    log, toml = files
    shown = explain_file(log, formats=load_formats(toml), year=2024)
    by_line = {r.line: r for r in shown.readings}
    assert [r.outcome for r in shown.readings] == ["skipped", "record", "record", "reject", "record", "record"]
    assert by_line[1].why == "no format recognises it (no step with a time or a rate)"
    # 0.25 s/it -> 4 global steps/s; 200 ms/it -> 1000 / 200 = 5.
    assert (by_line[2].format, by_line[2].records) == (
        "my-trainer",
        [{"step": 100, "global_steps_per_s": 4.0, "loss": 2.1}],
    )
    assert by_line[3].records == [{"step": 120, "global_steps_per_s": 5.0, "loss": 1.93}]
    assert (by_line[4].format, by_line[4].why) == ("my-trainer", "sec_per_step '0.2x' is not a finite number > 0")
    # The launcher tag is the envelope; it gave the record its task (the layer named first).
    assert (by_line[5].envelope, by_line[5].envelope_gave) == ("[worker-2] ", "launcher: worker/2")
    assert by_line[5].records == [
        {"role": "worker", "task_index": 2, "step": 160, "global_steps_per_s": 2.0, "loss": 1.8}
    ]
    assert (by_line[6].format, by_line[6].records) == (
        "tf-estimator",
        [{"step": 1500, "interval_s": 2.688, "loss": 0.734}],
    )
    v = shown.verdict
    # 4 records: 3 of my-trainer (lines 2, 3, 5) and 1 of tf-estimator (line 6).
    assert (v.format, v.records, v.by_format, v.roles, v.status) == (
        "my-trainer",
        4,
        {"my-trainer": 3, "tf-estimator": 1},
        ["(no role)", "worker/2"],
        "unknown",  # records, and no line saying the run finished
    )
    assert (v.lines, v.rejects, v.skipped, v.events) == (6, 1, 1, 0)


def test_a_window_and_small_batches_give_the_same_reading(files: tuple[Path, Path]) -> None:
    log, toml = files
    formats = load_formats(toml)
    whole = explain_file(log, formats=formats, year=2024)
    window = explain_file(log, (4, 5), formats=formats, year=2024, batch_bytes=64)
    assert [r.line for r in window.readings] == [4, 5]
    assert window.readings == whole.readings[3:5]
    assert window.verdict == whole.verdict


def test_folded_lines_and_a_failed_run(tmp_path: Path) -> None:
    log = tmp_path / "est.log"
    log.write_text(
        "INFO:tensorflow:global_step/sec: 37.2\n"
        "INFO:tensorflow:loss = 0.7, step = 100 (2.688 sec)\n"
        "ERROR:tensorflow:Model diverged with loss = NaN.\n",
        encoding="utf-8",
    )
    shown = explain_file(log)
    assert [r.outcome for r in shown.readings] == ["skipped", "record", "event"]
    assert shown.readings[0].why == "read with a neighbouring line (folded into its record)"
    assert shown.readings[1].records == [{"step": 100, "global_steps_per_s": 37.2, "interval_s": 2.688, "loss": 0.7}]
    assert shown.readings[2].records == [{"event": "failed", "reason": "Model diverged with loss = NaN."}]
    assert (shown.verdict.status, shown.verdict.failure_reason) == ("failed", "Model diverged with loss = NaN.")


def test_the_cli_reads_at_80_columns_and_cuts_no_number(files: tuple[Path, Path]) -> None:
    log, toml = files
    result = runner.invoke(
        app, ["formats", "--try", str(log), "--formats", str(toml), "--lines", "2-5"], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    flat = _squeezed(result.output)
    for text in (
        "step=100global_steps_per_s=4loss=2.1",  # floats to 6 significant digits
        "step=120global_steps_per_s=5loss=1.93",
        "envelope[worker-2]->launcher:worker/2",
    ):
        assert text in flat, result.output
    assert "sec_per_step'0.2x'isnotafinitenumber>0" in flat
    # The verdict covers the whole file, not just the window.
    assert "format my-trainer, 4 records (my-trainer 3, tf-estimator 1)" in " ".join(result.output.split())
    assert "status unknown; 1 rejected, 1 with no metric, of 6 lines" in " ".join(result.output.split())


def test_formats_lists_every_format_with_its_example_at_80_columns(files: tuple[Path, Path]) -> None:
    _, toml = files
    result = runner.invoke(app, ["formats", "--formats", str(toml)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    # the list has no borders (kubectl's style); the text after the table is no row
    table = result.output.split("Sniffing puts", 1)[0]
    examples = {row[0]: row[2] for row in wrapped_rows(table, ["name", "kind", "example", "step and seconds"])}
    for fmt in FORMATS.values():
        assert examples[fmt.name] == _squeezed(printable(fmt.example)), fmt.name  # a tab shows as \x09
    for envelope in ENVELOPES:
        assert examples[envelope.name] == _squeezed(printable(envelope.example)), envelope.name
    assert examples["my-trainer"] == "[trainer]it=120|0.25s/it|loss1.93"


def test_collect_prints_the_format_of_each_file(files: tuple[Path, Path], tmp_path: Path) -> None:
    log, toml = files
    # --settle 0: the log of a job that has ended, its last lines read now (as formats --try reads them)
    args = ["collect", "files", str(log), "--formats", str(toml), "-d", str(tmp_path / "ds"), "--settle", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # the table's title ("sources in DIR/") starts with "source" too: the header is the line naming the format
    header, row = (line for line in result.output.splitlines() if line.startswith(("source ", "train.log")))
    assert "format" in header and "my-trainer" in row
    assert "stored 4 step records" in result.output


@pytest.mark.parametrize("command", [["formats", "--try", "LOG"], ["collect", "files", "LOG", "-d", "DS"]])
def test_a_bad_formats_file_is_a_usage_error_on_one_line(
    tmp_path: Path, files: tuple[Path, Path], command: list[str]
) -> None:
    log, _ = files
    bad = tmp_path / "bad.toml"
    bad.write_text("[[format]]\nname = 'mine'\nregex = 'it=(?P<steps>\\d+) (?P<loss>\\S+)'\n", encoding="utf-8")
    argv = [str(log) if a == "LOG" else str(tmp_path / "ds") if a == "DS" else a for a in command]
    result = runner.invoke(app, [*argv, "--formats", str(bad)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: formats file {bad}, format 'mine': unknown group names"), (
        result.output
    )
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["formats", "--try", "LOG", "--lines", "9-3"], "give A-B with 1 <= A <= B"),
        (["formats", "LOG"], "give --try"),
        (["formats", "--try"], "--try needs a log file"),
    ],
)
def test_usage_errors_of_try(files: tuple[Path, Path], argv: list[str], says: str) -> None:
    log, _ = files
    result = runner.invoke(app, [str(log) if a == "LOG" else a for a in argv], terminal_width=200)
    assert result.exit_code == 2
    assert says in " ".join(result.output.replace("│", "").split())


def test_the_readme_section_commands_are_real() -> None:
    section = README.split("## My log is not read", 1)[1].split("\n## ", 1)[0]
    commands = [
        shlex.split(line.split("  #")[0])
        for block in section.split("```bash")[1:]
        for line in block.split("```", 1)[0].splitlines()
        if line.startswith("tierscope ")
    ]
    assert len(commands) == 4
    for argv in commands:
        path = argv[1:3] if argv[1] == "collect" else argv[1:2]
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        for option in (w for w in argv if w.startswith("--")):
            assert option in result.output, f"{' '.join(argv)}: {option}"


def test_the_verdict_names_the_tasks_that_logged_without_a_step_record(tmp_path: Path) -> None:
    # Keras epoch lines only (case18's shape): no step record, but the stream-logs column says
    # master-replica-0 wrote every line, so the verdict's roles name that task.
    log = tmp_path / "stream.log"
    log.write_text(
        "INFO\t2018-02-06 17:09:57 +0100\tmaster-replica-0\t\tEpoch 1/20\n"
        "INFO\t2018-02-06 17:20:52 +0100\tmaster-replica-0\t\tEpoch 00001: saving model to checkpoint.01.hdf5\n",
        encoding="utf-8",
    )
    v = explain_file(log).verdict
    assert (v.records, v.roles, v.status) == (0, ["master/0"], "empty")


def test_the_verdict_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    # one Estimator line: 1 record (step 100), no event, 1 line read; it said "1 records ... of 1 lines"
    log = tmp_path / "one.log"
    log.write_text("INFO:tensorflow:loss = 0.7, step = 100 (2.688 sec)\n", encoding="utf-8")
    result = runner.invoke(app, ["formats", "--try", str(log)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "format tf-estimator, 1 record, 0 events, roles" in flat, result.output
    assert "0 rejected, 0 with no metric, of 1 line" in flat and "1 records" not in flat


def test_the_verdict_counts_records_as_collect_stores_them_and_names_no_empty_envelope(tmp_path: Path) -> None:
    # A tqdm bar drawn twice at step 100 (the same values: a copy) and once at 200. collect stores 2 records
    # and skips 1 duplicate; the verdict says the same. The bar's leading space is no envelope to name.
    bar = " {p}%|#####     | {n}/200 [{t}<01:40,  1.00it/s]"
    log = tmp_path / "bars.log"
    lines = [
        bar.format(p=50, n=100, t="01:40"),
        bar.format(p=50, n=100, t="01:40"),
        bar.format(p=100, n=200, t="03:20"),
    ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    v = explain_file(log).verdict
    assert (v.records, v.duplicates) == (2, 1)
    result = runner.invoke(app, ["formats", "--try", str(log)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "format grammar, 2 records and 1 duplicate, 0 events" in flat, result.output
    assert "envelope" not in flat.replace("envelope, message", ""), result.output
    # (--settle 0: the job has ended; while the log may grow, its last bar waits for what may follow it)
    stored = runner.invoke(
        app, ["collect", "files", str(log), "--run-id", "r", "-d", str(tmp_path / "ds"), "--settle", "0"]
    )
    assert stored.exit_code == 0, stored.output
    assert "stored 2 step records and 0 events, 1 repeated record within its file" in " ".join(stored.output.split())
