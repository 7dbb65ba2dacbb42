"""A log replaced by another text (rewritten from its start, or another file moved over it) is read as that text:
its format sniffed anew, not read in the format the earlier text was sniffed as."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from tests.support.ingest_helpers import collect
from tierscope.dataset.store import Dataset

# A tqdm bar (the grammar's) first; then TF-slim's lines (tensorflow/models issue 2980, a comment of 2018), whose
# sec/step is one worker's local step time: no global rate (../shared/cases README, case01's note).
BAR = "  10%|#         | 8/80 [00:02<00:23,  3.10it/s]\n"
SLIM = "".join(
    f"INFO:tensorflow:global step {s}: loss = {67.3 - s:.4f} ({t} sec/step)\n"
    for s, t in ((1, 57.126), (2, 17.053), (3, 16.534))
)


@pytest.mark.parametrize("how", ["rewritten", "moved over"])
def test_a_log_replaced_by_another_text_is_read_as_that_text(tmp_path: Path, how: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(BAR)
    replaced = Dataset(tmp_path / "replaced")
    collect(replaced, log, settle_s=0)
    if how == "rewritten":
        log.write_text(SLIM)  # truncated, then written again
    else:
        (tmp_path / "new").write_text(SLIM)
        os.replace(tmp_path / "new", log)
    collect(replaced, log, settle_s=0)
    fresh = Dataset(tmp_path / "fresh")
    (tmp_path / "alone.log").write_text(SLIM)
    collect(fresh, tmp_path / "alone.log", settle_s=0)
    columns = ["step", "global_steps_per_s", "local_steps_per_s", "format"]
    slim = Dataset(replaced.root).read("steps").filter(pl.col("format") != "grammar").sort("step").select(columns)
    # steps 1-3 at 1 / 57.126 = 0.017505, 1 / 17.053 = 0.058641, 1 / 16.534 = 0.060481 local steps/s, no global
    # rate: as a fresh collect of the slim text reads them (read as the bar's grammar, each was a global rate)
    assert slim.equals(Dataset(fresh.root).read("steps").sort("step").select(columns))
    assert slim["global_steps_per_s"].null_count() == 3
    assert slim["local_steps_per_s"].to_list() == pytest.approx([1 / 57.126, 1 / 17.053, 1 / 16.534])
