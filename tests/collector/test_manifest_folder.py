"""A manifest's relative paths stay within its folder: one climbing out (``../../etc/shadow``) is an
error naming it, the run and the manifest, before anything is read; an absolute path is read as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.collector.errors import ManifestError
from tierscope.collector.manifest import load_manifest


def manifest_with(folder: Path, *files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "runs.toml"
    listed = ", ".join(f'"{f}"' for f in files)
    manifest.write_text(f'[[run]]\nid = "r"\ntier = "BASIC"\nfiles = [{listed}]\n')
    return manifest


@pytest.mark.parametrize("name", ["../secret.log", "logs/../../secret.log"])
def test_a_relative_path_out_of_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "secret.log").write_text("Train [worker/0], step 1:loss:2.0 (0.1 sec) 10.0 global_steps/s\n")
    manifest = manifest_with(tmp_path / "runs", name)
    with pytest.raises(ManifestError) as raised:
        load_manifest(manifest)
    assert str(raised.value) == (
        f"manifest {manifest}, run #1 (r): file {name!r} lies outside the manifest's folder {tmp_path / 'runs'}; "
        "give its absolute path to read a file elsewhere"
    )
    done = CliRunner().invoke(app, ["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds")])
    assert done.exit_code == 1
    assert "lies outside the manifest's folder" in done.output
    assert not (tmp_path / "ds" / "steps").exists()  # nothing read


def test_paths_within_the_folder_and_absolute_paths_are_kept(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.log"
    manifest = manifest_with(tmp_path / "runs", "a.log", "logs/../b.log", str(elsewhere))
    (spec,) = load_manifest(manifest)
    assert spec.files == [tmp_path / "runs" / "a.log", tmp_path / "runs" / "logs/../b.log", elsewhere]
