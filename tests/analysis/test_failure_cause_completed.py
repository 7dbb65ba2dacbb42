"""A traceback a collect read up to its frames, whose exception line the next collect read, fails the run with the
exception's line as its cause (tierscope.analysis.summary.failures), not the bare ``Traceback (most recent call
last):`` the first collect could only say (tierscope.dataset.schema.CUT_TRACEBACK_REASON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app

#: A Lightning fit that finished, then a sampling script of the same job that raised. The bar and the fit's
#: ending as Lightning prints them (Lightning-AI/lightning: src/lightning/pytorch/callbacks/progress/tqdm_progress.py,
#: and src/lightning/pytorch/loops/fit_loop.py's "`Trainer.fit` stopped: `max_epochs=...` reached."; quoted in
#: tests/collector/formats/test_status_hydra_job_errors.py from PLBFischer/walk-jump-fork ``e`` @ b1fc8d75), a
#: traceback as CPython prints it, and PyTorch's out-of-memory error as its CUDA caching allocator words it
#: (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, 2.0; quoted in tests/collector/formats/test_grammar_stanzas.py).
LOG = [
    "Epoch 0: 100%|██████████| 100/100 [00:20<00:00,  4.95it/s, loss=0.500, v_num=0]",
    "Epoch 1: 100%|██████████| 100/100 [00:20<00:00,  4.95it/s, loss=0.400, v_num=0]",
    "`Trainer.fit` stopped: `max_epochs=2` reached.",
    "Traceback (most recent call last):",
    '  File "/home/user/project/sample.py", line 41, in <module>',
    "    images = model.sample(batch_size=16)",
    '  File "/home/user/project/model.py", line 88, in sample',
    "    x = self.decoder(z)",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)",
]
CAUSE = LOG[-1]


def _summary(tmp_path: Path, first_lines: int) -> dict[str, object]:
    """The run's summary after a collect of the log's first ``first_lines`` lines (the file just written: read
    whole), then of the whole file twice (it grew; then settled)."""
    log, ds, runner = tmp_path / "sample.log", str(tmp_path / "ds"), CliRunner()
    args = ["collect", "files", str(log), "-d", ds, "--run-id", "s"]
    log.write_text("\n".join(LOG[:first_lines]) + "\n", encoding="utf-8")
    assert runner.invoke(app, args).exit_code == 0
    log.write_text("\n".join(LOG) + "\n", encoding="utf-8")
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, [*args, "--settle", "0"]).exit_code == 0
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", ds, "--json"]).stdout)
    return row


@pytest.mark.parametrize("first_lines", [4, 6, 8])
def test_the_exception_line_read_later_is_the_cause(tmp_path: Path, first_lines: int) -> None:
    # the first collect ends after "Traceback ..." (line 4), a frame (6) or the last frame's code (8): it stores
    # a failure with no cause yet; the second reads line 9, the exception: that is the cause the run shows
    row = _summary(tmp_path, first_lines)
    assert (row["status"], row["failure_reason"]) == ("failed", CAUSE)


def test_a_traceback_the_log_ends_in_still_says_its_cause_is_missing(tmp_path: Path) -> None:
    # near miss: no later collect completes it (the log ends at the last frame): the failure stands as it was read
    log, ds, runner = tmp_path / "cut.log", str(tmp_path / "ds"), CliRunner()
    log.write_text("\n".join(LOG[:8]) + "\n", encoding="utf-8")
    assert runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "s", "--settle", "0"]).exit_code == 0
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", ds, "--json"]).stdout)
    assert row["status"] == "failed"
    assert row["failure_reason"] == "Traceback (most recent call last): ending the log (its exception line missing)"
