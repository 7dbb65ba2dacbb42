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

from tierscope.reexport import reexport_lazily

#: Each public name and the module that defines it (no imports for type checkers here: every
#: collector module imports this package first, and such an import would close a circle).
_ORIGINS = {
    "collect_runs": "tierscope.collector.collect",
    "collect_file": "tierscope.collector.collect",
    "runs_from_paths": "tierscope.collector.runs",
    "RunSpec": "tierscope.collector.manifest",
    "load_manifest": "tierscope.collector.manifest",
    "collect_cloud": "tierscope.collector.cloud",
    "CloudOptions": "tierscope.collector.cloud",
    "ReadOptions": "tierscope.collector.reading",
    "Reader": "tierscope.collector.reading",
    "READERS": "tierscope.collector.registry",
    "reader_for": "tierscope.collector.registry",
    "CollectorError": "tierscope.collector.errors",
    "InputError": "tierscope.collector.errors",
    "MissingInputError": "tierscope.collector.errors",
    "ManifestError": "tierscope.collector.errors",
    "UnknownFormatError": "tierscope.collector.formats",
    "CloudLoggingError": "tierscope.collector.sources.cloud_logging",
    "CollectStopped": "tierscope.collector.cloud",
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

__getattr__, __dir__ = reexport_lazily(__name__, _ORIGINS)
