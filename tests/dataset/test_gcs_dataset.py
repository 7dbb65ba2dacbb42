"""The dataset on Cloud Storage (``--dataset gs://bucket/prefix``) keeps the local dataset's
promises, against a real emulator (tests/support/gcs_emulator.py): the same summary, every record
exactly once with a collector SIGKILLed beside another, a killed holder's lease taken over after
its expiry, state fenced by generations, and one clear line without credentials."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.gcs_emulator import Emulator
from tests.support.ingest_helpers import step_line
from tierscope.cli import app
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.compact import compact
from tierscope.dataset.errors import DatasetBusyError
from tierscope.dataset.lock import locked
from tierscope.dataset.objects import LEASE_ENV, GcsStore, GsPath, StateConflictError
from tierscope.dataset.state import StateStore
from tierscope.dataset.store import Dataset

#: Short enough that a killed holder's lease expires within a test, long enough for the emulator
#: (one request at a time) to renew it on a busy machine.
LEASE_S = 2.0


@pytest.fixture
def gcs_env(gcs_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {**gcs_emulator.env, LEASE_ENV: str(LEASE_S)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_2016_demo_on_the_emulator_summarises_as_locally(
    gcs_emulator: Emulator, gcs_env: dict[str, str], bundled_manifest: Path, dataset_2016: Dataset
) -> None:
    gcs_emulator.bucket("demo-2016")
    url = "gs://demo-2016/team/tierscope/"
    _cli("collect", "files", "--manifest", str(bundled_manifest), "--dataset", url, "-q")
    local = json.loads(_cli("summary", "--json", "--dataset", str(dataset_2016.root)))
    remote = json.loads(_cli("summary", "--json", "--dataset", url))
    # Every figure of every run, not only the headline: the same records give the same analysis.
    assert remote == local and len(remote) == 4
    # The layout is the local one under the prefix: hive partitions, state, the lease object.
    names = {b.name for b in gcs_emulator.client().list_blobs("demo-2016")}
    assert "team/tierscope/.lock" in names and "team/tierscope/state/files.json" in names
    assert any(n.startswith("team/tierscope/steps/run_id=basic/part-") for n in names)
    # A second collect stores nothing (one part per partition: compact has nothing to merge);
    # doctor checks 3 steps parts (premium_1 logged only an event), 1 events, 4 runs parts and
    # state/files.json: 9, as locally.
    _cli("collect", "files", "--manifest", str(bundled_manifest), "--dataset", url, "-q")
    assert "compacted 0 partitions" in _cli("compact", "--dataset", url)
    assert _cli("doctor", "--dataset", url) == _cli("doctor", "--dataset", str(dataset_2016.root))
    assert "checked 9 files: 0 corrupt" in _cli("doctor", "--dataset", url)
    assert json.loads(_cli("summary", "--json", "--dataset", url)) == local


def test_state_writes_are_fenced_by_generation(gcs_emulator: Emulator, gcs_env: dict[str, str]) -> None:
    gcs_emulator.bucket("fenced")
    # Two processes: two stores of the same bucket, each remembering what it last read.
    first = StateStore(GsPath(GcsStore("fenced"), "ds/state"))
    second = StateStore(GsPath(GcsStore("fenced"), "ds/state"))
    first.save("files", {"n": 1})
    assert second.load("files") == {"n": 1}
    second.save("files", {"n": 2})
    with pytest.raises(StateConflictError, match="changed by another process"):
        first.save("files", {"n": 3})  # it last saw n=1: writing would lose n=2
    assert first.load("files") == {"n": 2}
    first.save("files", {"n": 3})  # having read the newer one, it may write
    with pytest.raises(StateConflictError):
        StateStore(GsPath(GcsStore("fenced"), "ds/state")).save("files", {"n": 0})  # never read: create-only


_HOLDER = """
import sys
from tierscope.dataset.lock import locked
from tierscope.dataset.store import Dataset
with locked(Dataset(sys.argv[1]), timeout=5):
    print("HELD", flush=True)
    sys.stdin.readline()
"""


def test_a_killed_holders_lease_is_taken_over_after_its_expiry(
    gcs_emulator: Emulator, gcs_env: dict[str, str], tmp_path: Path
) -> None:
    gcs_emulator.bucket("stale-lease")
    url = "gs://stale-lease/ds"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **gcs_env},
        cwd=tempfile.gettempdir(),
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
    time.sleep(LEASE_S)  # past the first expiry: only the renewals keep it
    log = tmp_path / "a.log"
    log.write_text("".join(step_line(s) for s in (1, 2, 3)))
    busy = CliRunner().invoke(app, ["collect", "files", str(log), "-d", url, "--lock-timeout", "0", "-q"])
    assert busy.exit_code == 75 and "locked by another collect" in busy.output
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    killed_at = time.time()
    lease = json.loads(gcs_emulator.client().bucket("stale-lease").blob("ds/.lock").download_as_bytes())
    # Not yet expired: a killed holder still blocks until then.
    with pytest.raises(DatasetBusyError), locked(Dataset(url), timeout=0):
        pass
    with locked(Dataset(url), timeout=3 * LEASE_S):
        took_at = time.time()
    # Taken once the killed holder's last renewal expired, not before (its expiry is in the lease).
    assert lease["expires"] - 0.05 <= took_at <= lease["expires"] + LEASE_S, (killed_at, lease, took_at)
    after = json.loads(gcs_emulator.client().bucket("stale-lease").blob("ds/.lock").download_as_bytes())
    assert after["holder"] is None and after["expires"] == 0  # released: the object stays, expired


# One collect. With KILL_AT=<n>:<before|after> it stops at its n-th object write (a data part or
# a state document; lease renewals are not counted) and waits on stdin, holding the lease (its
# renewal thread runs on), so the test can SIGKILL it exactly there.
_COLLECTOR = """
import os, sys
from pathlib import Path
from tierscope.dataset import objects
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset

calls = 0
target, where = os.environ["KILL_AT"].split(":")

def stopping(real):
    def write(self, *args, **kwargs):
        global calls
        calls += 1
        if calls == int(target) and where == "before":
            print("BLOCK", flush=True); sys.stdin.readline()
        out = real(self, *args, **kwargs)
        if calls == int(target) and where == "after":
            print("BLOCK", flush=True); sys.stdin.readline()
        return out
    return write

objects.GcsStore.write_once = stopping(objects.GcsStore.write_once)
objects.GcsStore.replace = stopping(objects.GcsStore.replace)
print("READY", flush=True)
sys.stdin.readline()
run = RunSpec("big", "BASIC", [Path(sys.argv[2])])
collect_runs(Dataset(sys.argv[1]), [run], lock_timeout=60, batch_bytes=int(sys.argv[3]))
print("DONE", flush=True)
"""

LINES = 3_000
GROWTH = 300  # lines appended before each round, as a live log grows between cron runs
BATCH = 40_000  # bytes per append: a collect of 300 new lines writes a steps part, then files.json
ROUNDS = 10


def _collector(url: str, log: Path, env: dict[str, str], kill_at: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _COLLECTOR, url, str(log), str(BATCH)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **env, "KILL_AT": kill_at},
        cwd=tempfile.gettempdir(),
    )


def _say(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


def test_two_collectors_one_sigkilled_ten_times_store_every_record_exactly_once(
    gcs_emulator: Emulator, gcs_env: dict[str, str], tmp_path: Path
) -> None:
    gcs_emulator.bucket("two-hosts")
    url = "gs://two-hosts/ds"
    log = tmp_path / "big.log"
    written = LINES
    log.write_text("".join(step_line(s) for s in range(1, written + 1)))
    rng = random.Random(15)

    def kill_point() -> str:
        # Every collect of new lines writes at least a steps part and files.json: writes 1 and 2.
        return f"{rng.randint(1, 2)}:{rng.choice(['before', 'after'])}"

    spare = _collector(url, log, gcs_env, kill_point())  # a round ahead: its start-up overlaps the round before
    killed_holding = 0
    busy: list[BaseException] = []
    for _ in range(ROUNDS):
        victim, spare = spare, _collector(url, log, gcs_env, kill_point())
        assert victim.stdout is not None and victim.stdout.readline().strip() == "READY"
        _say(victim, "go")
        assert victim.stdout.readline().strip() == "BLOCK"  # at its kill point, holding the lease

        def other_host(errors: list[BaseException] = busy) -> None:
            try:
                collect_runs(Dataset(url), [RunSpec("big", "BASIC", [log])], lock_timeout=60, batch_bytes=BATCH)
            except DatasetBusyError as exc:  # it lost a lease to a stall: a cron run that exits 75
                errors.append(exc)

        host = threading.Thread(target=other_host)
        host.start()  # waits for the victim's lease, renewed until the kill, then for its expiry
        time.sleep(rng.uniform(0.0, 1.0))
        killed_holding += victim.poll() is None
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        host.join()
        with log.open("a") as fh:
            fh.writelines(step_line(s) for s in range(written + 1, written + GROWTH + 1))
        written += GROWTH
    spare.kill()
    spare.wait()
    collect_runs(Dataset(url), [RunSpec("big", "BASIC", [log])], lock_timeout=60, batch_bytes=BATCH)
    steps = sorted(Dataset(url).read("steps")["step"].to_list())
    # Every line of the log once: 3000 + 10 rounds * 300 lines, steps 1..6000, none twice.
    assert steps == list(range(1, LINES + ROUNDS * GROWTH + 1))
    assert killed_holding == ROUNDS  # every kill hit a collect holding the lease mid-write
    assert len(busy) <= 2, busy  # the in-process collector lost its lease to a stall at most twice
    # Compaction there too: each partition's parts merged into one, each record still once.
    parts = len(Dataset(url).files("steps"))
    assert parts > 1
    assert compact(Dataset(url)).files_before >= parts
    assert len(Dataset(url).files("steps")) == 1
    assert sorted(Dataset(url).read("steps")["step"].to_list()) == steps


def test_a_dataset_url_whose_bucket_name_is_invalid_is_one_line(gcs_env: dict[str, str]) -> None:
    # was a traceback: google-cloud-storage's "ValueError: Bucket names must start and end with a
    # number or letter." raised before any request (the collect's inputs already said so in a line)
    for command in (["summary"], ["rejects"]):
        result = CliRunner().invoke(app, [*command, "--dataset", "gs://Bad_Bucket!/ds"])
        assert result.exit_code == 1, result.output
        assert result.output.strip().splitlines() == [
            "error: gs://Bad_Bucket! is not a bucket name (Bucket names must start and end with a number or "
            "letter.); fix --dataset"
        ]


def test_no_credentials_or_no_bucket_is_one_line_saying_what_to_do(
    gcs_emulator: Emulator, gcs_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = CliRunner().invoke(app, ["summary", "--dataset", "gs://no-such-bucket-15/ds"])
    assert missing.exit_code == 1
    assert missing.output.strip().splitlines() == [
        "error: cannot list gs://no-such-bucket-15/ds/steps/: bucket no-such-bucket-15 does not exist; "
        "create it with `gcloud storage buckets create gs://no-such-bucket-15` or fix --dataset"
    ]
    # Without the emulator: application-default credentials, here none.
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "absent-key.json"))
    result = CliRunner().invoke(app, ["summary", "--dataset", "gs://team-bucket-15/tierscope"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: no usable Google Cloud credentials to connect to gs://team-bucket-15 (")
    assert "absent-key.json was not found" in lines[0]
    assert lines[0].endswith("run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS")


def test_doctor_fix_on_the_emulator_quarantines_a_damaged_object_and_collect_restores_it(
    gcs_emulator: Emulator, gcs_env: dict[str, str], tmp_path: Path
) -> None:
    bucket = gcs_emulator.bucket("doctor-fix")
    url = "gs://doctor-fix/ds"
    log = tmp_path / "a.log"
    log.write_text("".join(step_line(s) for s in range(1, 101)))
    collect_runs(Dataset(url), [RunSpec("r", "BASIC", [log])])
    (part,) = [b for b in bucket.list_blobs(prefix="ds/steps/") if "/part-" in b.name]
    damaged = bytearray(part.download_as_bytes())
    damaged[len(damaged) // 2] ^= 0xFF  # one flipped byte: the SHA-256 in its name no longer matches
    part.upload_from_string(bytes(damaged))
    checked = _cli_fails("doctor", "--dataset", url)
    assert f"corrupt: gs://doctor-fix/{part.name}: its bytes changed since it was written" in checked
    fixed = CliRunner().invoke(app, ["doctor", "--dataset", url, "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert f"moved to gs://doctor-fix/ds/quarantine/steps/run_id=r/{part.name.rsplit('/', 1)[1]}" in fixed.output
    assert Dataset(url).read("steps").height == 0  # the only part is in quarantine
    collect_runs(Dataset(url), [RunSpec("r", "BASIC", [log])])  # the rewind note: the log is read again
    assert sorted(Dataset(url).read("steps")["step"].to_list()) == list(range(1, 101))


def _cli_fails(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    return result.output


@pytest.mark.parametrize(
    ("n", "lease"),
    [
        (1, {"holder": "h:1:ab", "expires": 1e12, "ttl": 60}),  # year 33658: a clock set far ahead
        (2, {"holder": "h:1:ab", "expires": "inf", "ttl": 60}),
        (3, {"holder": "h:1:ab", "expires": 1e12, "ttl": "nan"}),  # no ttl of its own: the reader's
    ],
)
def test_a_lease_expiring_further_ahead_than_a_holder_writes_is_stale(
    gcs_emulator: Emulator, gcs_env: dict[str, str], n: int, lease: dict[str, object]
) -> None:
    # Such a lease once locked the dataset for good: every collect exited 75 ("try again later").
    gcs_emulator.bucket(bucket := f"far-lease-{n}")
    gcs_emulator.client().bucket(bucket).blob("ds/.lock").upload_from_string(json.dumps(lease))
    with locked(Dataset(f"gs://{bucket}/ds"), timeout=0):
        pass
    # A live holder's lease (now + its ttl) still holds.
    live = {"holder": "h:1:ab", "expires": time.time() + 30, "ttl": 30}
    gcs_emulator.client().bucket(bucket).blob("ds/.lock").upload_from_string(json.dumps(live))
    with pytest.raises(DatasetBusyError), locked(Dataset(f"gs://{bucket}/ds"), timeout=0):
        pass
