"""A JSON record that gives one key twice is a reject: Python's decoder kept the last value silently,
so a second ``run_id`` moved the record to another run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.ingest_helpers import collect
from tierscope.collector.jsonvalues import JSONValueError, loads, loads_lenient, problem_in
from tierscope.dataset.store import Dataset


def test_loads_refuses_a_key_given_twice() -> None:
    with pytest.raises(JSONValueError, match="key 'run_id' appears twice in one object"):
        loads('{"run_id": "a", "step": 1, "run_id": "b"}')
    assert loads('{"a": {"b": 1}, "b": 2}') == {"a": {"b": 1}, "b": 2}  # the same key in two objects is fine


def test_an_export_marks_only_the_entry_with_the_key_twice() -> None:
    doc = loads_lenient('[{"a": 1}, {"x": {"step": 1, "step": 2}}]')
    assert problem_in(doc[0]) is None
    assert problem_in(doc[1]) == "key 'step' appears twice in one object at x.step"


def test_a_structured_record_with_two_run_ids_is_a_reject(tmp_path: Path) -> None:
    log = tmp_path / "chief-0.jsonl"
    good = {"tierscope": "step", "step": 1, "elapsed_s": 1.0, "global_steps_per_s": 10.0}
    twice = (
        '{"tierscope": "step", "run_id": "r", "step": 2, "elapsed_s": 2.0, "global_steps_per_s": 10.0, '
        '"run_id": "other"}'
    )
    log.write_text(json.dumps(good) + "\n" + twice + "\n")
    ds = Dataset(tmp_path / "ds")
    collect(ds, log, run_id="r")
    fresh = Dataset(ds.root)
    assert fresh.read("steps")["step"].to_list() == [1]
    rejects = fresh.read("rejects")
    assert rejects.select("source_offset", "reason").rows() == [(2, "key 'run_id' appears twice in one object")]
    assert set(fresh.read("steps")["run_id"]) == {"r"}
