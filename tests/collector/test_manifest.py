"""Manifests with wrong field types: a ManifestError naming the run and the field, never a traceback
(a list ``note`` used to fail in polars after the logs were stored; ``run = [5]`` was an AttributeError)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tierscope.collector.errors import ManifestError
from tierscope.collector.manifest import load_manifest


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('id = 5\nfiles = ["a.log"]', "run #1: 'id' is 5, not a string; quote it: id = \"5\""),
        ('files = ["a.log"]', "run #1: missing 'id' (a string)"),
        ('id = "a"\nfiles = ["a.log"]\ntier = 5', "run #1 (a): 'tier' is 5, not a string"),
        ('id = "a"\nfiles = ["a.log"]\nnote = ["x"]', "run #1 (a): 'note' is ['x'], not a string"),
        ('id = "a"\nfiles = ["a.log"]\nconfig = 2', "run #1 (a): 'config' is 2, not a string"),
        # a blank name would group unrelated runs under nothing; "" too (nothing to name a configuration)
        (
            'id = "a"\nfiles = ["a.log"]\nconfig = "   "',
            "run #1 (a): 'config' is blank; give the configuration's name, or leave it out (the run is then its own)",
        ),
        ('id = "a"\nfiles = ["a.log"]\nconfig = ""', "run #1 (a): 'config' is blank; give the configuration's"),
        # an escape (ESC, U+001B) or a newline in a name: refused, shown escaped
        (
            'id = "a"\nfiles = ["a.log"]\nconfig = "std\\u001b[2J"',
            "run #1 (a): 'config' 'std\\x1b[2J' holds a control character; give a name of printable characters",
        ),
        ('id = "a"\nfiles = ["a.log"]\nconfig = "std\\nx"', "run #1 (a): 'config' 'std\\x0ax' holds a control"),
        (
            'id = "a"\nfiles = ["a.log"]\nran_on = 2016-12-31',
            "run #1 (a): 'ran_on' is datetime.date(2016, 12, 31), not a string",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_named(tmp_path: Path, body: str, message: str) -> None:
    manifest = tmp_path / "runs.toml"
    manifest.write_text(f"[[run]]\n{body}\n")
    with pytest.raises(ManifestError) as raised:
        load_manifest(manifest)
    assert str(raised.value).startswith(f"manifest {manifest}, {message}")


def test_a_config_name_is_stripped(tmp_path: Path) -> None:
    # " std " and "std" name one configuration: the spaces around a name are dropped
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "a"\nfiles = ["a.log"]\nconfig = " std "\n'
                        '[[run]]\nid = "b"\nfiles = ["b.log"]\nconfig = "std"\n')  # fmt: skip
    assert [r.config for r in load_manifest(manifest)] == ["std", "std"]


def test_runs_that_are_not_tables_are_named(tmp_path: Path) -> None:
    manifest = tmp_path / "runs.toml"
    manifest.write_text("run = [5]\n")
    with pytest.raises(ManifestError) as raised:
        load_manifest(manifest)
    assert str(raised.value) == f"manifest {manifest}, run #1: not a table; write each run as a [[run]] table"


def test_manifest_typos_and_duplicate_ids_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("")
    cases = {
        'teir = "BASIC"': "unknown keys ['teir']",
        'tier = "BASIC"\n[[run]]\nid = "r"\nfiles = ["a.log"]': "run id 'r' appears twice",
    }
    for extra, message in cases.items():
        manifest = tmp_path / "runs.toml"
        manifest.write_text(f'[[run]]\nid = "r"\nfiles = ["a.log"]\n{extra}\n')
        with pytest.raises(ManifestError, match=re.escape(message)):
            load_manifest(manifest)


def test_a_run_naming_an_unknown_format_does_not_stop_the_others(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tierscope.cli import app
    from tierscope.dataset.store import Dataset

    good = tmp_path / "good.log"
    good.write_text(
        "INFO:root:Train [master/0], step 100 (10.000 sec) 10.0 global steps/s, 10.0 local steps/s\n"
        "INFO:root:Train [master/0], step 200 (20.000 sec) 10.0 global steps/s, 10.0 local steps/s\n"
    )
    (tmp_path / "bad.log").write_text(good.read_text())
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "bad"\nfiles = ["bad.log"]\nformat = "nosuchformat"\n\n'
        '[[run]]\nid = "good"\nfiles = ["good.log"]\n'
    )
    result = CliRunner().invoke(app, ["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 2  # a usage error, after the other run was stored
    assert "run 'bad'" in result.output and "unknown log format 'nosuchformat'" in result.output
    # The good run's 2 records are stored; the bad run's file was not read.
    assert Dataset(tmp_path / "ds").read("steps").get_column("run_id").to_list() == ["good", "good"]


def test_a_run_whose_file_is_missing_is_named_with_its_manifest_and_not_recorded(tmp_path: Path) -> None:
    """A typo in a manifest's path: the error names the file as resolved, the run and the manifest, and
    says what to do; the run is not recorded (it used to be an `empty` row of every summary), the other
    run is; once the file is there, the next collect records and reads it."""
    from typer.testing import CliRunner

    from tierscope.cli import app
    from tierscope.dataset.store import Dataset

    (tmp_path / "logs").mkdir()
    good = tmp_path / "logs" / "good.log"
    good.write_text("INFO:root:Train [master/0], step 100 (10.000 sec) 10.0 global steps/s, 10.0 local steps/s\n")
    manifest = tmp_path / "logs" / "runs.toml"
    manifest.write_text('[[run]]\nid = "typo"\nfiles = ["goood.log"]\n\n[[run]]\nid = "good"\nfiles = ["good.log"]\n')
    argv = ["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds"), "-q"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1
    missing = tmp_path / "logs" / "goood.log"
    assert (
        f"cannot read {missing}: no such file or directory (run 'typo' of manifest {manifest}, whose paths are "
        "relative to its folder); correct the path there and collect again"
    ) in " ".join(result.output.split())
    ds = Dataset(tmp_path / "ds")
    assert ds.read("runs").get_column("run_id").to_list() == ["good"]
    assert ds.read("steps").get_column("run_id").to_list() == ["good"]

    missing.write_text(good.read_text())
    assert CliRunner().invoke(app, argv).exit_code == 0
    assert sorted(ds.read("runs").get_column("run_id").to_list()) == ["good", "typo"]
    assert sorted(ds.read("steps").get_column("run_id").to_list()) == ["good", "typo"]


def test_a_global_batch_is_the_examples_of_the_whole_job(tmp_path: Path) -> None:
    # one VM of 4 GPUs is one training task: its batch is the global 128; a chief and 3 workers (sync) share
    # a global 256: 256 / (1 + 3) = 64 each; batch_size is as given
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "a"\nfiles = ["a.log"]\nglobal_batch = 128\n'
                        '[[run]]\nid = "b"\nfiles = ["b.log"]\nglobal_batch = 256\nworkers = 3\n'
                        '[[run]]\nid = "c"\nfiles = ["c.log"]\nbatch_size = 32\n')  # fmt: skip
    assert [r.batch_size for r in load_manifest(manifest)] == [128, 64, 32]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("batch_size = 32\nglobal_batch = 128", "give 'batch_size' (examples per training task a step) or"),
        ("global_batch = 100\nworkers = 2", "'global_batch' 100 is not a whole number of examples for each of its 3"),
        ("global_batch = 128\nworkers = 1\nps = 1", "'global_batch' with parameter servers is ambiguous"),
        ("global_batch = 0", "'global_batch' must be a whole number >= 1"),
    ],
)
def test_a_global_batch_that_names_no_task_batch_is_refused(tmp_path: Path, body: str, message: str) -> None:
    manifest = tmp_path / "runs.toml"
    manifest.write_text(f'[[run]]\nid = "a"\nfiles = ["a.log"]\n{body}\n')
    with pytest.raises(ManifestError) as raised:
        load_manifest(manifest)
    assert message in str(raised.value)
