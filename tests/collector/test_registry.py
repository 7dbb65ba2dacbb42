"""collector/registry.py: a new input kind is one reader and one line in the registry. A toy reader
of ``.toy`` files (one ``step loss`` pair a line) is registered here and a collect reads through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from tierscope.collector import registry
from tierscope.collector.collect import collect_runs
from tierscope.collector.errors import InputError
from tierscope.collector.formats.base import Parsed
from tierscope.collector.manifest import RunSpec
from tierscope.collector.positions import Positions
from tierscope.collector.readers.logs import LogReader
from tierscope.collector.reading import Batch, ReadOptions
from tierscope.collector.runs import SourceCounts
from tierscope.dataset.store import Dataset


class ToyReading:
    """A ``.toy`` file: every line ``STEP LOSS``; one batch of two lines at a time."""

    pipelined = False

    def __init__(self, path: Path, run: RunSpec) -> None:
        self.path = path
        self.counts = SourceCounts(source=str(path), run_id=run.run_id, format="toy")

    def batches(self) -> Iterator[Batch]:
        lines = self.path.read_text().splitlines()
        for start in range(0, len(lines), 2):
            rows = [(start + i + 1, *line.split()) for i, line in enumerate(lines[start : start + 2])]
            steps = pl.DataFrame(
                {
                    "source_offset": [n for n, _, _ in rows],
                    "step": [int(step) for _, step, _ in rows],
                    "loss": [float(loss) for _, _, loss in rows],
                    "format": ["toy"] * len(rows),
                }
            )
            self.counts.lines += len(rows)
            nothing = pl.DataFrame()
            yield Batch(Parsed(steps=steps, events=nothing, rejects=nothing, rest=nothing))


class ToyReader:
    name = "toy"

    def claims(self, source: Path | str | object) -> bool:
        return isinstance(source, Path) and source.suffix == ".toy"

    def open(self, source: Path | str | object, run: RunSpec, positions: Positions, options: ReadOptions) -> ToyReading:
        return ToyReading(Path(str(source)), run)


def test_a_registered_reader_collects_through_the_sink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "READERS", [ToyReader(), *registry.READERS])  # the one registry line
    toy = tmp_path / "run.toy"
    toy.write_text("100 2.5\n200 2.25\n300 2.0\n")
    ds = Dataset(tmp_path / "ds")
    (counts,) = collect_runs(ds, [RunSpec(run_id="toy-run", tier="BASIC_1", files=[toy])]).sources
    # Three lines in two batches (2 + 1), three step records, nothing else.
    assert (counts.lines, counts.steps, counts.rejects, counts.format) == (3, 3, 0, "toy")
    steps = ds.read("steps").sort("step")
    assert steps.select("run_id", "tier", "source", "source_offset", "step", "loss", "format").rows() == [
        ("toy-run", "BASIC_1", str(toy), 1, 100, 2.5, "toy"),
        ("toy-run", "BASIC_1", str(toy), 2, 200, 2.25, "toy"),
        ("toy-run", "BASIC_1", str(toy), 3, 300, 2.0, "toy"),
    ]
    assert ds.read("runs").get_column("run_id").to_list() == ["toy-run"]


def test_the_first_reader_that_claims_a_source_reads_it(tmp_path: Path) -> None:
    assert isinstance(registry.reader_for(tmp_path / "a.log"), LogReader)
    assert registry.reader_for(tmp_path / "events.out.tfevents.1.host").name == "tfevents"
    assert registry.reader_for("gs://bucket/a.log").name == "log"
    with pytest.raises(InputError, match="no reader reads it"):
        registry.reader_for(42)
