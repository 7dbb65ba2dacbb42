"""import_ahead: modules imported on a thread, a failing one left to its importer, the rest skipped once told,
and an exit not held up by an import under way."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from tierscope.ahead import import_ahead


def test_modules_are_imported_in_order_and_a_failure_is_left_to_the_importer() -> None:
    sys.modules.pop("colorsys", None)
    thread = import_ahead("tierscope_no_such_module", "colorsys")  # the first fails: the second still comes
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert "colorsys" in sys.modules
    assert "tierscope_no_such_module" not in sys.modules


def test_nothing_is_begun_once_the_work_is_done() -> None:
    sys.modules.pop("colorsys", None)
    done = threading.Event()
    done.set()
    import_ahead("colorsys", until=done).join(timeout=30)
    assert "colorsys" not in sys.modules


# A module whose import takes two minutes, begun ahead; the main thread then ends.
EXIT_MID_IMPORT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tierscope.ahead import import_ahead
import_ahead("tierscope_slow_import")
while "tierscope_slow_import" not in sys.modules:  # its body is running
    time.sleep(0.01)
print("done")
"""


def test_a_command_ending_mid_import_exits_without_waiting_for_it(tmp_path: Path) -> None:
    # tierscope report stopped by Ctrl-C waited up to a second for Altair to finish importing
    (tmp_path / "tierscope_slow_import.py").write_text("import time\ntime.sleep(120)\n")
    done = subprocess.run(
        [sys.executable, "-c", EXIT_MID_IMPORT, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\n", "")
