"""TensorBoard event files as a source: written with tensorboard's own record writer and summary
protos (TF1 ``simple_value`` and the TF2 tensor form ``tf.summary.scalar`` writes), read back
through ``collect files``, with hand-computed figures."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.scalar.summary_v2 import scalar_pb
from tensorboard.summary.writer.record_writer import RecordWriter
from typer.testing import CliRunner

from tests.support import ROOT
from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.collector.formats.declared import FormatsFileError, load_formats
from tierscope.collector.manifest import RunSpec
from tierscope.collector.sources.tfevents import Place, place_of, run_name
from tierscope.dataset.store import Dataset

README = (ROOT / "docs" / "reading-logs.md").read_text(encoding="utf-8")
T0 = 1_700_000_000.0  # the writer opens (file_version event), Unix seconds


def simple(tag: str, value: float) -> summary_pb2.Summary:
    """A TF1 / Estimator scalar."""
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])


def write_events(path: Path, events: list[tuple[float, int, summary_pb2.Summary]], mode: str = "wb") -> None:
    """Event records ``(wall time, step, summary)``; a new file starts with its file_version event."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode) as fh:
        writer = RecordWriter(fh)
        if mode == "wb":
            writer.write(event_pb2.Event(wall_time=T0, file_version="brain.Event:2").SerializeToString())
        for wall, step, summary in events:
            writer.write(event_pb2.Event(wall_time=wall, step=step, summary=summary).SerializeToString())


def estimator_events(rates: list[float], first_step: int = 100) -> list[tuple[float, int, summary_pb2.Summary]]:
    """Estimator's pair per logging interval of 100 steps: ``global_step/sec`` then ``loss``, 10 s apart."""
    out = []
    for i, rate in enumerate(rates):
        wall, step = T0 + 10.0 * (i + 1), first_step + 100 * i
        out += [(wall, step, simple("global_step/sec", rate)), (wall, step, simple("loss", 2.0 - 0.1 * i))]
    return out


def collect(ds: Dataset, *paths: Path, settle_s: float = 0.0, run: RunSpec | None = None, **kw: object):  # type: ignore[no-untyped-def]
    spec = run or RunSpec(run_id="r", tier="BASIC", files=list(paths))
    return collect_runs(ds, [spec], settle_s=settle_s, **kw).sources  # type: ignore[arg-type]


def steps_of(ds: Dataset) -> pl.DataFrame:
    return Dataset(ds.root).read("steps").sort("source", "source_offset")


@pytest.fixture
def ds(tmp_path: Path) -> Dataset:
    return Dataset(tmp_path / "ds")


def test_estimator_file_gives_the_hand_computed_steady_rate(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "job42" / "events.out.tfevents.1700000000.host"
    write_events(log, estimator_events([5.0, 10.0, 10.0, 11.0, 12.0, 12.0]))
    [counts] = collect(ds, log)
    # 13 events: the file_version one and 6 x (rate, loss); each pair is one record, so 7 skipped.
    assert (counts.lines, counts.steps, counts.skipped, counts.rejects) == (13, 6, 7, 0)
    steps = steps_of(ds)
    assert steps["step"].to_list() == [100, 200, 300, 400, 500, 600]
    assert steps["loss"].to_list() == pytest.approx([2.0, 1.9, 1.8, 1.7, 1.6, 1.5])
    # The wall times, and seconds since the writer opened: 10, 20, ... 60.
    assert steps["elapsed_s"].to_list() == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert steps["timestamp"][0].timestamp() == T0 + 10.0
    assert steps["role"].null_count() == 6 and steps["format"].unique().to_list() == ["tfevents"]
    # Steady state: the first interval (5.0) is warm-up; the rest, 100 steps each at 10, 10, 11, 12, 12
    # steps/s, take 10 + 10 + 9.0909 + 8.3333 + 8.3333 = 45.7576 s (none past 1.25x the median step time
    # of 1/11 s: the slowest is 1.1x), so the time-weighted rate is 500 / 45.7576 = 10.9272.
    assert analyze(ds).summary["steady_global_steps_per_s"][0] == pytest.approx(500 / (20 + 100 / 11 + 200 / 12))


def test_keras_tensor_scalars_per_task_and_validation(tmp_path: Path, ds: Dataset) -> None:
    run = tmp_path / "kerasrun"
    for task, rate in ((0, 20.0), (1, 22.0)):
        events = []
        for i, step in enumerate((50, 100, 150)):
            wall = T0 + 5.0 * (i + 1)
            events += [
                (wall, step, scalar_pb("batch_steps_per_second", rate)),
                (wall, step, scalar_pb("batch_loss", 1.0 + i)),
                (wall, step, scalar_pb("batch_accuracy", 0.5)),
            ]
        events.append((T0 + 16.0, 0, scalar_pb("epoch_loss", 1.5)))  # epoch 0: an epoch index, no global step
        write_events(run / f"worker_{task}" / "train" / "events.out.tfevents.1.h", events)
    write_events(
        run / "worker_0" / "validation" / "events.out.tfevents.2.h",
        [
            (T0 + 17.0, 150, scalar_pb("evaluation_loss_vs_iterations", 0.9)),
            (T0 + 17.0, 0, scalar_pb("epoch_loss", 0.9)),
        ],
    )
    [spec] = runs_from_paths([run], None, "BASIC", None)
    assert spec.run_id == "kerasrun" and len(spec.files) == 3
    collect(ds, run=spec)
    steps = steps_of(ds)
    train = steps.filter(pl.col("role") == "worker", pl.col("step").is_not_null())
    assert train.group_by("task_index").agg(pl.col("global_steps_per_s").first()).sort("task_index").rows() == [
        (0, 20.0),
        (1, 22.0),
    ]
    assert train.filter(pl.col("task_index") == 1)["loss"].to_list() == [1.0, 2.0, 3.0]
    epochs = steps.filter(pl.col("step").is_null(), pl.col("role") == "worker")
    # One epoch record per task, kept apart by its event number: 1 file_version + 9 batch events + 1.
    assert epochs["position"].to_list() == [11, 11] and epochs["loss"].to_list() == [1.5, 1.5]
    # Tensor scalars are float32: 0.9 reads back as 0.8999999761581421.
    evaluation = steps.filter(pl.col("role") == "evaluator").with_columns(pl.col("eval_loss").round(6))
    rows = evaluation.select("task_index", "step", "eval_loss", "loss").rows()
    assert rows == [(0, 150, 0.9, None), (0, None, 0.9, None)]


def test_cut_off_last_record_is_the_end_of_the_data(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "job" / "events.out.tfevents.3.h"
    write_events(log, estimator_events([10.0, 10.0, 10.0, 10.0]))
    whole = log.stat().st_size
    os.truncate(log, whole - 7)  # inside the last record (the loss of step 400)
    [fresh] = collect(ds, log, settle_s=1e9)
    # Fresh file, read for the first time: its steps are taken as they are (step 400 with its rate), but the cut
    # record may still be being written: it waits, neither stored nor a reject.
    assert fresh.steps == 4 and fresh.rejects == 0
    # The note says how to take it at once: after a finished job, waiting --settle is surprising.
    assert any("left for the next collect" in n and "--settle 0" in n for n in fresh.notes)
    [settled] = collect(ds, log)
    # Settled: every complete record is stored (step 400 has its rate, not its cut-off loss) ...
    assert settled.steps == 0 and steps_of(ds)["step"].to_list() == [100, 200, 300, 400]
    assert steps_of(ds)["loss"][-1] is None and steps_of(ds)["global_steps_per_s"][-1] == 10.0
    # ... and the file is said to have ended early: a note, and a reject naming event 9 and its bytes.
    assert any(n.startswith("the file ended early: it ends inside event 9") for n in settled.notes)
    rejects = Dataset(ds.root).read("rejects")
    assert rejects["source_offset"].to_list() == [9] and "cut off" in rejects["reason"][0]
    [again] = collect(ds, log)
    assert (again.lines, again.steps, again.rejects) == (0, 0, 0)


def test_growing_file_is_read_from_where_it_stopped(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "job" / "events.out.tfevents.4.h"
    write_events(log, estimator_events([10.0, 10.0, 10.0]))
    [first] = collect(ds, log, settle_s=1e9)
    # The file's first read takes it as it is, fresh or not: 1 + 3 x 2 events.
    assert (first.lines, first.steps) == (7, 3)
    write_events(log, estimator_events([12.0, 12.0], first_step=400)[:3], mode="ab")
    [second] = collect(ds, log, settle_s=1e9)
    # Followed from there: 400 whole, 500 (its rate only so far) held back while the file is fresh.
    assert (second.lines, second.steps) == (2, 1)
    [third] = collect(ds, log)
    assert (third.lines, third.steps) == (1, 1)
    assert collect(ds, log)[0].notes == ["unchanged"]
    [reread] = collect(ds, log, reread=True)
    assert (reread.steps, reread.duplicates) == (0, 5)
    assert steps_of(ds)["step"].to_list() == [100, 200, 300, 400, 500]


def test_damaged_record_and_bad_rate_are_rejects(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "job" / "events.out.tfevents.5.h"
    events = estimator_events([10.0, 10.0, 10.0])
    events[2] = (events[2][0], events[2][1], simple("global_step/sec", float("nan")))
    write_events(log, events)
    data = bytearray(log.read_bytes())
    data[-10] ^= 0xFF  # inside the last record's data: its checksum fails
    log.write_bytes(bytes(data))
    [counts] = collect(ds, log)
    reasons = dict(Dataset(ds.root).read("rejects").select("source_offset", "reason").iter_rows())
    assert reasons[4] == "event 4: global_step/sec nan at step 200 is not a finite number >= 0"
    assert reasons[7] == "event 7: fails its checksum: damaged, not read"
    # Step 200 keeps its loss; step 300 its rate; nothing else was lost.
    assert counts.rejects == 2 and steps_of(ds)["step"].to_list() == [100, 200, 300]


def test_bytes_that_are_no_records_are_one_reject(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "job" / "events.out.tfevents.8.h"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"this is not a TFRecord file at all")
    [counts] = collect(ds, log)
    [reason] = Dataset(ds.root).read("rejects")["reason"].to_list()
    assert reason == (
        "event 1: the length of the record at byte 0 fails its checksum: the file is damaged from there, "
        "its last 34 bytes are not read"
    )
    assert (counts.steps, counts.lines) == (0, 0) and collect(ds, log)[0].notes == ["unchanged"]


def test_declared_tags_map_other_names(tmp_path: Path, ds: Dataset) -> None:
    # The block of docs/reading-logs.md (section "My log is not read").
    section = README.split("## My log is not read", 1)[1].split("\n## ", 1)[0]
    toml = tmp_path / "my-formats.toml"
    toml.write_text(
        section.split("```toml\n[tensorboard.tags]", 1)[1].split("```", 1)[0].join(["[tensorboard.tags]", ""])
    )
    declared = load_formats(toml)
    log = tmp_path / "job" / "events.out.tfevents.6.h"
    write_events(log, [(T0 + 1, 10, simple("perf/step_time", 0.25)), (T0 + 1, 10, simple("train/total_loss", 3.0))])
    collect(ds, run=RunSpec(run_id="r", tier=None, files=[log], formats=declared))
    # 0.25 s per step is 1 / 0.25 = 4 global steps/s.
    assert steps_of(ds).select("step", "global_steps_per_s", "loss").rows() == [(10, 4.0, 3.0)]
    # `formats --try` on an event file lists its tags and what each is read as.
    shown = CliRunner().invoke(app, ["formats", "--try", str(log), "--formats", str(toml)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "a TensorBoard event file, 2 scalar tags" in shown.output
    assert "  perf/step_time  1 events  read as sec_per_step" in shown.output
    toml.write_text('[tensorboard.tags]\n"x" = "speed"\n')
    with pytest.raises(FormatsFileError, match="'x' -> 'speed': a field is one of global_steps_per_s"):
        load_formats(toml)


@pytest.mark.parametrize(
    ("parts", "place"),
    [
        ("job/events", Place()),
        ("job/worker_3/events", Place("worker", 3)),
        ("job/chief/train/events", Place("chief", 0)),
        ("job/master-replica-0/events", Place("master", 0)),
        ("job/workertemp_2/train/events", Place("worker", 2)),
        ("job/eval/events", Place("evaluator", 0, True)),
        ("job/worker-1/validation/events", Place("evaluator", 1, True)),
        ("job/eval_holdout/events", Place("evaluator", 0, True)),
        ("job/train/events", Place()),
    ],
)
def test_place_from_directories(parts: str, place: Place) -> None:
    assert place_of(Path(parts)) == place


def test_event_file_alone_belongs_to_its_job_directory(tmp_path: Path) -> None:
    log = tmp_path / "jobs" / "job42" / "worker_0" / "train" / "events.out.tfevents.7.h"
    write_events(log, [])
    assert run_name(log) == "job42"
    assert [s.run_id for s in runs_from_paths([log], None, None, None)] == ["job42"]


def test_small_batches_store_the_same_records(tmp_path: Path, ds: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    from tierscope.collector.readers import eventfiles

    log = tmp_path / "job" / "events.out.tfevents.9.h"
    write_events(log, estimator_events([5.0, 10.0, 10.0, 11.0, 12.0, 12.0]))
    once = Dataset(tmp_path / "once")
    collect(once, log)
    monkeypatch.setattr(eventfiles, "BATCH_EVENTS", 3)  # a step's pair is cut by every batch
    [counts] = collect(ds, log)
    assert (counts.lines, counts.steps, counts.skipped) == (13, 6, 7)
    assert steps_of(ds).drop("source").equals(steps_of(once).drop("source"))


def test_every_cut_of_a_file_frames_exactly_the_whole_records(tmp_path: Path) -> None:
    import io

    from tierscope.collector.sources.tfrecord import Ending, read_records

    log = tmp_path / "events.out.tfevents.10.h"
    write_events(log, estimator_events([10.0, 11.0]))
    data = log.read_bytes()
    ends = [r.end for r in read_records(io.BytesIO(data))]
    assert len(ends) == 5 and ends[-1] == len(data)
    for cut in range(len(data) + 1):
        ending = Ending(0, 0)
        got = [r.end for r in read_records(io.BytesIO(data[:cut]), ending=ending)]
        # The records wholly inside the first `cut` bytes, and a cut exactly where one ends is no cut.
        assert got == [e for e in ends if e <= cut]
        assert ending.how == ("end" if cut in (0, *ends) else "cut"), cut
        assert ending.offset == (got[-1] if got else 0)


def test_settle_help_says_it_holds_an_event_files_last_step() -> None:
    # A finished run's event files, collected at once, kept their last step back with no hint in --help.
    shown = CliRunner().invoke(app, ["collect", "files", "--help"], env={"COLUMNS": "200"}).output
    squeezed = " ".join(shown.replace("│", " ").split())
    assert "a report whose next line is not written yet (an event file: its last step's events); 0 for a" in squeezed


@pytest.mark.parametrize("wall", [float("nan"), float("inf"), 1e300, -1e18])
def test_wall_time_that_is_no_time_is_a_reject(tmp_path: Path, ds: Dataset, wall: float) -> None:
    # A NaN or far-away wall time once stopped the collect in the timestamp's cast (a traceback).
    log = tmp_path / "job" / "events.out.tfevents.9.h"
    events = estimator_events([10.0, 10.0, 10.0])
    events[2] = (wall, events[2][1], events[2][2])  # event 4: step 200's global_step/sec
    write_events(log, events)
    [counts] = collect(ds, log)
    reasons = Dataset(ds.root).read("rejects")["reason"].to_list()
    assert reasons == [
        f"event 4: global_step/sec at step 200: wall time {wall!r} is not a time between 1970 and 9999 (Unix seconds)"
    ]
    # Step 200 keeps its loss (event 5, at a real time); nothing else was lost.
    assert counts.rejects == 1 and steps_of(ds)["step"].to_list() == [100, 200, 300]


@pytest.mark.parametrize("length", [2**64 - 1, 2**62])
def test_length_past_the_end_of_the_file_is_a_cut_record(tmp_path: Path, ds: Dataset, length: int) -> None:
    # A length that passes its checksum but lies past the file's end once raised ValueError
    # (2**64 - 1: not an offset) or stopped the collect with EINVAL (2**62) from the seek.
    import struct

    from tierscope.collector.sources.tfrecord import masked_crc32c

    log = tmp_path / "job" / "events.out.tfevents.10.h"
    write_events(log, estimator_events([10.0]))
    head = struct.pack("<Q", length)
    with log.open("ab") as fh:
        fh.write(head + struct.pack("<I", masked_crc32c(head)) + b"four")
    [counts] = collect(ds, log)
    [reason] = Dataset(ds.root).read("rejects")["reason"].to_list()
    assert reason.startswith("event 4: the file ends inside it")
    assert counts.rejects == 1 and steps_of(ds)["step"].to_list() == [100]


def test_tensor_of_many_values_or_no_numpy_type_is_no_scalar(tmp_path: Path, ds: Dataset) -> None:
    # A shape of 2**40 floats once made make_ndarray allocate 4 TiB (MemoryError); a resource
    # or variant dtype raised KeyError. Neither is a scalar: the event holds no metric.
    from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2, types_pb2

    huge = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2**40)])
    tensors = [
        tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[1.0], tensor_shape=huge),
        tensor_pb2.TensorProto(dtype=types_pb2.DT_RESOURCE),
        tensor_pb2.TensorProto(dtype=types_pb2.DT_VARIANT),
    ]
    events = estimator_events([10.0])
    for i, tensor in enumerate(tensors):
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss", tensor=tensor)])
        events.append((T0 + 20.0 + i, 200 + 100 * i, summary))
    events.append((T0 + 30.0, 500, simple("global_step/sec", 10.0)))
    write_events(log := tmp_path / "job" / "events.out.tfevents.11.h", events)
    [counts] = collect(ds, log)
    # 7 events (file_version, step 100's two, the three tensors, step 500's rate) make 2
    # records, each counted by its first event: 7 - 2 = 5 skipped.
    assert (counts.lines, counts.rejects, counts.skipped) == (7, 0, 5)
    assert steps_of(ds)["step"].to_list() == [100, 500]
