"""collector/__init__.py: the collector's few public names, by name, imported on first use."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import tierscope.collector as collector


def test_every_public_name_is_what_it_names() -> None:
    assert sorted(collector.__all__) == sorted(collector._ORIGINS)
    for name in collector.__all__:
        value = getattr(collector, name)
        assert not isinstance(value, ModuleType), name  # collect_cloud is the function, not a module
        assert getattr(value, "__name__", name) == name, f"{name} is {value!r}"
        assert name in dir(collector)
    # The loops, the readers' registry and the errors a caller catches.
    assert {"collect_runs", "collect_cloud", "READERS", "reader_for", "CollectorError", "InputError"} <= set(
        collector.__all__
    )


def test_importing_the_collector_imports_no_polars() -> None:
    code = "import sys, tierscope.collector\nprint(' '.join(m for m in ('polars', 'pyarrow') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
