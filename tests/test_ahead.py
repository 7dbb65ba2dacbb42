"""import_ahead: modules imported on a thread, a failing one left to its importer, the rest skipped once told."""

from __future__ import annotations

import sys
import threading

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
