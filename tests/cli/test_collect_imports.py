"""What a collect's own process loads to store new lines: pyarrow writes the files without numpy, and
under --quiet nothing of rich (nothing is printed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tierscope.dataset.store import Dataset

COLLECT = """
import json, sys
from tierscope.cli import main

try:
    main()
finally:
    print(json.dumps(sorted(sys.modules)))
"""

LINES = (
    "Train [master/0], step 100:loss:2.5, accuracy:0.25 (4.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"
    "Train [master/0], step 200:loss:2.0, accuracy:0.5 (8.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"
)


def test_a_quiet_collect_of_new_lines_stores_them_without_numpy_or_rich(tmp_path: Path) -> None:
    log, ds = tmp_path / "a.log", tmp_path / "ds"
    log.write_text(LINES)
    argv = ["collect", "files", str(log), "-d", str(ds), "--tier", "BASIC", "-q"]
    done = subprocess.run([sys.executable, "-c", COLLECT, *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout.splitlines()[-1])
    assert "pyarrow.parquet" in modules
    assert [m for m in modules if m.split(".")[0] in ("numpy", "rich")] == []
    # both records, as written: steps 100 and 200, losses 2.5 and 2.0
    steps = Dataset(ds).read("steps", columns=["step", "loss"]).sort("step")
    assert steps.rows() == [(100, 2.5), (200, 2.0)]
