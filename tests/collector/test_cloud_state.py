"""Named JSON state documents (dataset/state.py) and the client-side rate limit (collector/ratelimit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tierscope.collector.ratelimit import SlidingWindowLimiter
from tierscope.dataset.state import StateCorruptError, StateStore, state_name


def test_save_load_replace(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state")
    assert store.load("cloud-logging-abc") is None
    assert store.names() == []
    path = store.save("cloud-logging-abc", {"watermark": {"timestamp": "t1"}, "n": 1})
    assert path == tmp_path / "state" / "cloud-logging-abc.json"
    store.save("cloud-logging-abc", {"n": 2})
    assert store.load("cloud-logging-abc") == {"n": 2}
    # No temporary file is left behind by a completed save.
    assert [p.name for p in (tmp_path / "state").iterdir()] == ["cloud-logging-abc.json"]
    assert store.names() == ["cloud-logging-abc"]
    assert store.delete("cloud-logging-abc") is True
    assert store.load("cloud-logging-abc") is None


def test_failed_save_keeps_the_old_document(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.save("s", {"n": 1})
    with pytest.raises(TypeError):
        store.save("s", {"n": object()})
    assert store.load("s") == {"n": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_leftover_temporary_file_is_ignored(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.save("s", {"n": 1})
    (tmp_path / ".tmp-s.json").write_text('{"n": 2, "trunc')  # a save killed mid-write
    assert store.load("s") == {"n": 1}
    assert store.names() == ["s"]


def test_corrupt_document_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("{not json")
    with pytest.raises(StateCorruptError, match=r"s\.json is not valid JSON .*delete it"):
        StateStore(tmp_path).load("s")
    (tmp_path / "t.json").write_text("[1, 2]")
    with pytest.raises(StateCorruptError, match="holds a JSON list"):
        StateStore(tmp_path).load("t")


def test_names_are_safe_and_stable() -> None:
    name = state_name("cloud-logging", "my-project", 'resource.labels.job_id="a/../b"')
    assert name == state_name("cloud-logging", "my-project", 'resource.labels.job_id="a/../b"')
    assert name.startswith("cloud-logging-") and len(name) == len("cloud-logging-") + 16
    assert name != state_name("cloud-logging", "my-project", 'resource.labels.job_id="a"')
    # The separator keeps ("ab", "c") and ("a", "bc") apart.
    assert state_name("k", "ab", "c") != state_name("k", "a", "bc")
    with pytest.raises(ValueError, match="not a plain file name"):
        StateStore(Path("/tmp")).path("../escape")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_sliding_window_limit() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(3, period=60.0, clock=clock, sleep=clock.sleep)
    # Calls at t=100, 110, 120 pass; the 4th at t=130 must wait until the first leaves the
    # window at 100 + 60 = 160: 30 s. The 5th (at 160) waits until 110 + 60 = 170: 10 s.
    waits = []
    for step in (0, 10, 10, 10):
        clock.now += step
        waits.append(limiter.acquire())
    waits.append(limiter.acquire())
    assert waits == [0.0, 0.0, 0.0, 30.0, 10.0]
    assert clock.sleeps == [30.0, 10.0]
    assert limiter.waited_s == 40.0
    # 61 s later the window is empty again: 3 calls pass at once.
    clock.now += 61
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]


def test_limit_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SlidingWindowLimiter(0)
    with pytest.raises(ValueError, match="positive"):
        SlidingWindowLimiter(1, period=0)
