"""Formats users declare in a TOML file: read like the shipped ones, and each wrong declaration
is a one-line usage error naming the file, the format and the problem.

The log they read is invented (no shipped format knows it): ``[trainer] it=N | X s/it | loss L``.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from tests.support import ROOT
from tests.support.formats_support import outcome_offsets, parse
from tierscope.collector.collect import collect_runs
from tierscope.collector.errors import CollectorError
from tierscope.collector.formats import describe_formats, sniff_format
from tierscope.collector.formats.declared import (
    DeclaredFormat,
    FormatsFileError,
    load_format_files,
    load_formats,
    to_steps_per_s,
)
from tierscope.collector.manifest import load_manifest
from tierscope.dataset.store import Dataset
from tierscope.errors import UsageError

README = (ROOT / "docs" / "reading-logs.md").read_text(encoding="utf-8")

TRAINER_LOG = [
    "[trainer] starting, 2 epochs",
    "[trainer] it=100 | 0.25 s/it | loss 2.10",
    "[trainer] it=120 | 200 ms/it | loss 1.93",
    "[trainer] it=140 | 0.2x s/it | loss 1.90",
    "[worker-2] [trainer] it=160 | 0.5 s/it | loss 1.80",
    "INFO:tensorflow:loss = 0.734, step = 1500 (2.688 sec)",
]


def readme_toml() -> str:
    """The formats file of the section "My log is not read" (docs/reading-logs.md)."""
    section = README.split("## My log is not read", 1)[1].split("\n## ", 1)[0]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


def write(tmp_path: Path, text: str, name: str = "my-formats.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def readme_formats(tmp_path: Path) -> tuple[DeclaredFormat, ...]:
    return load_formats(write(tmp_path, readme_toml()))


def test_the_readme_format_reads_the_invented_log(readme_formats: tuple[DeclaredFormat, ...]) -> None:
    (fmt,) = readme_formats
    assert (fmt.name, fmt.groups, fmt.rate) == ("my-trainer", ("step", "sec_per_step", "ms_per_step", "loss"), "global")
    got = parse(TRAINER_LOG, formats=readme_formats)
    steps = got.steps.filter(pl.col("format") == "my-trainer")
    # 0.25 s/it -> 1 / 0.25 = 4.0 steps/s; 200 ms/it -> 1000 / 200 = 5.0; 0.5 s/it -> 2.0.
    assert steps.select("source_offset", "step", "global_steps_per_s", "local_steps_per_s", "loss").rows() == [
        (2, 100, 4.0, None, 2.10),
        (3, 120, 5.0, None, 1.93),
        (5, 160, 2.0, None, 1.80),
    ]
    # The launcher tag before line 5 gives its task; the lines without one have none.
    assert steps.select("role", "task_index").rows() == [(None, None), (None, None), ("worker", 2)]
    # Line 4 matches but its seconds are broken: a reject with the reason, not a drop.
    assert got.rejects.select("source_offset", "format", "reason").rows() == [
        (4, "my-trainer", "sec_per_step '0.2x' is not a finite number > 0")
    ]
    # The shipped formats still read what they know (after the declared one), and every line is
    # exactly one outcome: records 2, 3, 5, 6; reject 4; line 1 skipped.
    assert got.steps.filter(pl.col("format") == "tf-estimator").get_column("step").to_list() == [1500]
    assert outcome_offsets(got) == {"steps": [2, 3, 5, 6], "events": [], "rejects": [4]}
    assert got.skipped == 1


def test_the_readme_example_line_is_the_formats_own(readme_formats: tuple[DeclaredFormat, ...]) -> None:
    rows = describe_formats(readme_formats)
    assert (rows[0].name, rows[0].kind, rows[0].example) == (
        "my-trainer",
        "declared",
        "[trainer] it=120 | 0.25 s/it | loss 1.93",
    )
    assert {"cloudml", "tf-estimator", "keras"} <= {r.name for r in rows}


def test_sniffing_names_the_declared_format(readme_formats: tuple[DeclaredFormat, ...]) -> None:
    assert sniff_format(TRAINER_LOG) == "tf-estimator"  # the one line a shipped format knows
    assert sniff_format(TRAINER_LOG, readme_formats) == "my-trainer"  # 4 of the 6 lines


def test_only_a_declared_format(readme_formats: tuple[DeclaredFormat, ...]) -> None:
    got = parse(TRAINER_LOG, only="my-trainer", formats=readme_formats)
    assert outcome_offsets(got) == {"steps": [2, 3, 5], "events": [], "rejects": [4]}


LOCAL = (
    '[[format]]\nname = "ddp-rank"\n'
    r"regex = '^rank (?P<task>\d+) (?P<role>\w+) step (?P<step>\d+) (?P<ms_per_step>\S+)ms "
    r"ex/s (?P<examples_per_s>\S+) t=(?P<timestamp>\S+ \S+)'"
    '\nrate = "local"\nstep = "local"\ntime_format = "%d/%m/%Y %H:%M:%S"\ntime_zone = "Europe/Paris"\n'
)


def test_meaning_and_unit_hints(tmp_path: Path) -> None:
    formats = load_formats(write(tmp_path, LOCAL))
    got = parse(
        [
            "rank 3 Worker step 40 125ms ex/s 512.5 t=01/07/2021 14:00:05",
            "rank 1 worker step 41 125ms ex/s 510 t=31/02/2021 14:00:05",
            "rank 1 trainer step 42 125ms ex/s 510 t=01/07/2021 14:00:06",
        ],
        formats=formats,
    )
    # 125 ms/step -> 1000 / 125 = 8 local steps/s (rate = "local"); step = "local" -> local_step.
    # 14:00:05 in Paris in July (CEST, UTC+2) is 12:00:05 UTC.
    assert got.steps.select(
        "role",
        "task_index",
        "step",
        "local_step",
        "global_steps_per_s",
        "local_steps_per_s",
        "examples_per_s",
        "timestamp",
    ).rows() == [("worker", 3, None, 40, None, 8.0, 512.5, datetime(2021, 7, 1, 12, 0, 5, tzinfo=UTC))]
    assert got.rejects.get_column("reason").to_list() == [
        "timestamp '31/02/2021 14:00:05' does not match time_format '%d/%m/%Y %H:%M:%S'",
        "role 'trainer' is not one of master, chief, worker, ps, evaluator",
    ]


def test_iso_timestamps_by_default_and_a_line_without_any_metric(tmp_path: Path) -> None:
    text = r"""
[[format]]
name = "stamped"
regex = '^(?P<timestamp>.+?) step (?P<step>\d+)(?: loss (?P<loss>\S+))?$'
"""
    got = parse(
        ["2021-07-01T12:00:05.5Z step 7 loss 0.5", "2021-07-01 12:00:06 step 8 loss nan", "2021-07-01 12:00:07 step 9"],
        formats=load_formats(write(tmp_path, text)),
    )
    rows = got.steps.select("step", "loss", "timestamp").rows()
    assert rows[0] == (7, 0.5, datetime(2021, 7, 1, 12, 0, 5, 500000, tzinfo=UTC))
    # A NaN loss is a value (a diverged run says so), not a broken number; no offset means UTC.
    assert rows[1][0] == 8 and math.isnan(rows[1][1]) and rows[1][2] == datetime(2021, 7, 1, 12, 0, 6, tzinfo=UTC)
    assert got.rejects.get_column("reason").to_list() == ["matches format 'stamped' but captured no metric"]


def test_the_unit_conversion_is_exact() -> None:
    frame = pl.DataFrame({"v": [0.25, 0.2, 125.0, 8.0]})
    got = frame.select(
        s=to_steps_per_s(pl.col("v"), "sec_per_step"),
        ms=to_steps_per_s(pl.col("v"), "ms_per_step"),
        r=to_steps_per_s(pl.col("v"), "global_steps_per_s"),
    )
    # 1 / 0.25 = 4, 1 / 0.2 = 5, 1 / 125 = 0.008, 1 / 8 = 0.125; ms: 1000 / x.
    assert got.get_column("s").to_list() == [4.0, 5.0, 0.008, 0.125]
    assert got.get_column("ms").to_list() == [4000.0, 5000.0, 8.0, 125.0]
    assert got.get_column("r").to_list() == [0.25, 0.2, 125.0, 8.0]


GOOD = """name = "mine"
regex = '^it=(?P<step>\\d+) (?P<sec_per_step>\\S+) s/it'"""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[format]]\nregex = 'x(?P<loss>\\d)'", "format #1: missing 'name'"),
        ("[[format]]\nname = 'mine'", "format 'mine': missing 'regex'"),
        ("[[format]]\nname = 'mine'\nregex = '(?P<step>\\d+'", "format 'mine': the regex is not valid: unclosed group"),
        (
            "[[format]]\nname = 'mine'\nregex = 'it=(?P<steps>\\d+) (?P<loss>\\S+)'",
            "format 'mine': unknown group names ['steps']; a group is one of step, global_steps_per_s",
        ),
        (f"[[format]]\n{GOOD}\n[[format]]\n{GOOD}", "format 'mine' is declared twice"),
        (
            "[[format]]\nname = 'cloudml'\nregex = 'x(?P<loss>\\d)'",
            "format 'cloudml': 'cloudml' is the name of a shipped",
        ),
        (
            "[[format]]\nname = 'mine'\nregex = 'it=(?P<step>\\d+)'",
            "format 'mine': the regex captures no metric; name at least one group global_steps_per_s",
        ),
        (
            "[[format]]\nname = 'mine'\nregex = 'it=(?P<step>\\d+)(?= )(?P<loss>\\S+)'",
            "format 'mine': the regex uses look-ahead/look-behind",
        ),
        (
            "[[format]]\nname = 'mine'\nregex = '(?P<role>\\w+) (?P=role) (?P<loss>\\S+)'",
            "format 'mine': the regex uses a backreference",
        ),
        ("[[format]]\nname = 'mine'\nregex = '(?P<loss>\\S*)'", "format 'mine': the regex matches an empty line"),
        (f"[[format]]\n{GOOD}\nrate = 'job'", "format 'mine': 'rate' is 'job'; use \"global\" or \"local\""),
        (f"[[format]]\n{GOOD}\nexample = 'it=5 fast'", "format 'mine': the regex does not match its own example"),
        (f"[[format]]\n{GOOD}\ntime_format = '%Q'", "format 'mine': time_format '%Q' does not read times"),
        (f"[[format]]\n{GOOD}\ntime_zone = 'Mars/Olympus'", "format 'mine': time_zone 'Mars/Olympus' is not"),
        (f"[[format]]\n{GOOD}\nunits = 's'", "format 'mine': unknown keys ['units']"),
        (f"[[parsers]]\n{GOOD}", "unknown keys ['parsers']; declare each format as a [[format]] table"),
        ("[[format]\nname = 'x'", "is not valid TOML"),
        ("", "declares no format"),
    ],
)
def test_each_wrong_declaration_is_one_line_naming_file_format_and_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(FormatsFileError) as caught:
        load_formats(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message and problem in message, message
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, CollectorError)


def test_a_missing_formats_file_and_a_name_declared_in_two_files(tmp_path: Path) -> None:
    with pytest.raises(FormatsFileError, match=r"cannot read formats file .*nope.toml"):
        load_formats(tmp_path / "nope.toml")
    one = write(tmp_path, f"[[format]]\n{GOOD}", "one.toml")
    two = write(tmp_path, f"[[format]]\n{GOOD.replace('s/it', 'sec/it')}", "two.toml")
    assert len(load_format_files([one, one])) == 1  # the same file twice is read once
    with pytest.raises(
        FormatsFileError, match=r"format 'mine' is declared in .*one.toml and again, differently, in .*two.toml"
    ):
        load_format_files([one, two])


def test_a_manifest_names_a_formats_file_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    write(tmp_path / "conf", readme_toml(), "my-formats.toml")
    (tmp_path / "conf" / "train.log").write_text("\n".join(TRAINER_LOG) + "\n", encoding="utf-8")
    manifest = write(
        tmp_path / "conf",
        'formats = "my-formats.toml"\n'
        '[[run]]\nid = "r1"\ntier = "BASIC"\nfiles = ["train.log"]\nformat = "my-trainer"\n',
        "runs.toml",
    )
    runs = load_manifest(manifest)
    assert [f.name for f in runs[0].formats] == ["my-trainer"]
    dataset = Dataset(tmp_path / "ds")
    result = collect_runs(dataset, runs)
    (counts,) = result.sources
    # format = "my-trainer" reads with it alone: records 2, 3, 5; reject 4; lines 1 and 6 skipped.
    assert (counts.format, counts.steps, counts.rejects, counts.skipped) == ("my-trainer", 3, 1, 2)
    assert dataset.read("steps").sort("step").get_column("global_steps_per_s").to_list() == [4.0, 5.0, 2.0]


def test_a_manifest_formats_key_that_is_not_a_path(tmp_path: Path) -> None:
    manifest = write(tmp_path, 'formats = 3\n[[run]]\nid = "r1"\nfiles = ["a.log"]\n', "runs.toml")
    with pytest.raises(CollectorError, match=r"manifest .*runs.toml: 'formats' must be a path or a list of paths"):
        load_manifest(manifest)


def test_a_step_time_whose_rate_overflows_is_a_reject(tmp_path: Path) -> None:
    # 1 / 1e-320 s overflows a float: the line is kept aside, never stored as inf steps/s.
    formats = load_format_files([write(tmp_path, readme_toml())])
    got = parse(["[trainer] it=200 | 1e-320 s/it | loss 1", "[trainer] it=220 | 0.5 s/it | loss 1"], formats=formats)
    assert got.rejects.select("source_offset", "reason").rows() == [
        (1, "sec_per_step '1e-320' gives no finite steps/s")
    ]
    assert got.steps.select("step", "global_steps_per_s").rows() == [(220, 2.0)]


def test_a_pid_group_is_the_records_process_id(tmp_path: Path) -> None:
    # A Python logging layout with %(process)d: the pid is stored (a change of it is a new process); a
    # pid that is no whole number is a reject like a bad step.
    text = r"""
[[format]]
name = "pylog-pid"
regex = '^pid=(?P<pid>\S+) step (?P<step>\d+) loss (?P<loss>\S+)$'
"""
    got = parse(["pid=4711 step 7 loss 0.5", "pid=x1 step 8 loss 0.4"], formats=load_formats(write(tmp_path, text)))
    assert got.steps.select("step", "pid").rows() == [(7, 4711)]
    assert got.rejects.get_column("reason").to_list() == ["pid 'x1' is not a whole number >= 0"]


def test_a_log_read_with_a_declared_format_since_renamed_is_read_again(tmp_path: Path) -> None:
    # The dataset remembers the format that read a log, as the first one to try next time: a format renamed in
    # the user's file is no reason to refuse the log. Three records (it=100, 120, 160; it=140's time is no number).
    from typer.testing import CliRunner

    from tierscope.cli import app

    log = tmp_path / "trainer.log"
    log.write_text("\n".join(TRAINER_LOG) + "\n", encoding="utf-8")
    old = write(tmp_path, readme_toml(), "old.toml")
    name = load_formats(old)[0].name
    new = write(tmp_path, readme_toml().replace(f'name = "{name}"', 'name = "renamed"', 1), "new.toml")
    assert load_formats(new)[0].name == "renamed"
    ds = tmp_path / "ds"
    runner = CliRunner()
    # --settle 0: a finished log (while it may grow, the Estimator line it ends in waits for the next line)
    settled = ["--settle", "0"]
    first = runner.invoke(app, ["collect", "files", str(log), "--formats", str(old), "-d", str(ds), "-q", *settled])
    assert first.exit_code == 0, first.output
    again = runner.invoke(
        app, ["collect", "files", str(log), "--formats", str(new), "-d", str(ds), "--reread", *settled]
    )
    assert again.exit_code == 0, again.output
    assert "4 duplicates already stored" in again.output  # its 3 lines of the format and the Estimator line
    with log.open("a", encoding="utf-8") as f:
        f.write("[trainer] it=180 | 0.25 s/it | loss 1.70\n")
    more = runner.invoke(app, ["collect", "files", str(log), "--formats", str(new), "-d", str(ds), "-q"])
    assert more.exit_code == 0, more.output
    assert Dataset(ds).read("steps").filter(pl.col("format") == "renamed")["step"].to_list() == [180]


#: A regex written for the file's lines as they stand: Python logging's ``%(asctime)s - %(name)s - %(levelname)s -
#: %(message)s`` before the trainer's own words, its time (with milliseconds) captured by the declared format.
AS_WRITTEN = r"""
[[format]]
name = "py-trainer"
regex = '^(?P<timestamp>\S+ \S+) - trainer - INFO - it=(?P<step>\d+) \| (?P<sec_per_step>\S+) s/it'
time_format = "%Y-%m-%d %H:%M:%S,%3f"
rate = "local"
"""
PY_LOG = [
    "2024-05-01 10:00:00,250 - trainer - INFO - it=100 | 0.25 s/it",
    "2024-05-01 10:00:05,500 - trainer - INFO - it=120 | 0.2 s/it",
]


def test_a_declared_regex_reads_the_time_an_envelope_would_have_taken(tmp_path: Path) -> None:
    # The envelope (Python logging's fields) is taken off before the formats, so the message alone ("it=100 | ...")
    # does not match: the regex is then searched in the line as written. 10:00:00,250 is 250 ms past 10:00:00 UTC
    # (no offset: time_zone UTC); rate = "local": 1 / 0.25 s = 4 and 1 / 0.2 s = 5 local steps/s.
    formats = load_formats(write(tmp_path, AS_WRITTEN))
    got = parse(PY_LOG, formats=formats)
    assert got.rejects.height == 0
    assert got.steps.select("step", "timestamp", "local_steps_per_s", "format").rows() == [
        (100, datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC), 4.0, "py-trainer"),
        (120, datetime(2024, 5, 1, 10, 0, 5, 500000, tzinfo=UTC), 5.0, "py-trainer"),
    ]
    # the same read with the format alone (``--log-format``), and the file's format sniffed as it
    assert parse(PY_LOG, only="py-trainer", formats=formats).steps.height == 2
    assert sniff_format(PY_LOG, formats) == "py-trainer"
    # a line the regex matches as written with a time its time_format does not read is a reject, as any
    bad = parse(["2024-13-01 10:00:00,250 - trainer - INFO - it=140 | 0.25 s/it"], formats=formats)
    assert bad.rejects.get_column("reason").to_list() == [
        "timestamp '2024-13-01 10:00:00,250' does not match time_format '%Y-%m-%d %H:%M:%S,%3f'"
    ]


def test_a_declared_accuracy_in_percent_is_read_as_a_fraction(tmp_path: Path) -> None:
    text = r"""
[[format]]
name = "acc-trainer"
regex = '^\[trainer\] it=(?P<step>\d+) \| (?P<sec_per_step>\S+) s/it \| acc (?P<accuracy>\S+)'
"""
    formats = load_formats(write(tmp_path, text))
    lines = [f"[trainer] it={n} | 0.25 s/it | acc {a}" for n, a in ((100, "93.4%"), (120, "0.95"), (140, "150%"))]
    got = parse(lines, formats=formats)
    # 93.4% is 93.4 / 100 = 0.934, as a fraction written so is (0.95); each record keeps 1 / 0.25 = 4 steps/s
    assert got.steps.select("step", "accuracy", "global_steps_per_s").rows() == [(100, 0.934, 4.0), (120, 0.95, 4.0)]
    # 150 % is no accuracy: a reject saying so in the line's own terms
    assert got.rejects.get_column("reason").to_list() == ["accuracy '150%' is not a percentage between 0 and 100"]


def test_a_declared_time_without_a_year_is_of_the_collects_year(tmp_path: Path) -> None:
    # glog's header time, as a regex written for the whole line captures it (I, then MMDD HH:MM:SS.micro): no year in
    # it, so the collect's (2024 here, as glog's envelope times are dated): 0501 10:00:00.123456 is 2024-05-01 10:00:00
    # and 123456 us, UTC; 0.25 s/it is 1 / 0.25 = 4 global steps/s
    text = r"""
[[format]]
name = "glog-trainer"
regex = '^I(?P<timestamp>\d{4} \d\d:\d\d:\d\d\.\d{6}) +\d+ \S+\] it=(?P<step>\d+) \| (?P<sec_per_step>\S+) s/it'
time_format = "%m%d %H:%M:%S%.6f"
"""
    formats = load_formats(write(tmp_path, text))
    got = parse(["I0501 10:00:00.123456 140 train.py:10] it=100 | 0.25 s/it"], formats=formats)
    assert got.steps.select("step", "timestamp", "global_steps_per_s", "format").rows() == [
        (100, datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC), 4.0, "glog-trainer")
    ]
    # a time of day alone cannot be dated: refused when the file is loaded, saying what to do
    with pytest.raises(FormatsFileError, match="reads no date"):
        load_formats(write(tmp_path, text.replace("%m%d %H:%M:%S%.6f", "%H:%M:%S%.6f"), "time-only.toml"))
