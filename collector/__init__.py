"""The collector: step logs from files, Cloud Storage, Cloud Logging and TensorBoard event files
into a Parquet dataset.

Its public names, imported on first use (``tierscope --help`` and a collect with nothing new
import no polars)::

    from tierscope.collector import collect_runs, runs_from_paths, collect_cloud, CloudOptions

The layout: a reader per input kind (:mod:`~tierscope.collector.readers`, listed in
:mod:`~tierscope.collector.registry`, each implementing :mod:`~tierscope.collector.reading`)
yields batches with their positions (:mod:`~tierscope.collector.positions`); the sink
(:mod:`~tierscope.collector.sink`) stores them; :mod:`~tierscope.collector.collect` and
:mod:`~tierscope.collector.cloud` are the loops over both.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name and the module that defines it (no import here: it would load them all, and
#: every collector module imports this package first).
_WHERE = {
    "collect_runs": "collect",
    "collect_file": "collect",
    "runs_from_paths": "runs",
    "RunSpec": "manifest",
    "load_manifest": "manifest",
    "collect_cloud": "cloud",
    "CloudOptions": "cloud",
    "ReadOptions": "reading",
    "Reader": "reading",
    "READERS": "registry",
    "reader_for": "registry",
    "CollectorError": "errors",
    "InputError": "errors",
    "MissingInputError": "errors",
    "ManifestError": "errors",
    "UnknownFormatError": "formats",
    "CloudLoggingError": "sources.cloud_logging",
    "CollectStopped": "cloud",
}

__all__ = [
    "READERS",
    "CloudLoggingError",
    "CloudOptions",
    "CollectStopped",
    "CollectorError",
    "InputError",
    "ManifestError",
    "MissingInputError",
    "ReadOptions",
    "Reader",
    "RunSpec",
    "UnknownFormatError",
    "collect_cloud",
    "collect_file",
    "collect_runs",
    "load_manifest",
    "reader_for",
    "runs_from_paths",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
