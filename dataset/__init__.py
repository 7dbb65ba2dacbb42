"""The dataset: hive-partitioned Parquet that the collector writes and the analysis reads.

Schema (:mod:`.schema`), the store (:mod:`.store`: atomic appends, scans, reads), durable
writes (:mod:`.durable`), the lock (:mod:`.lock`), the compaction journal (:mod:`.journal`)
and compaction (:mod:`.compact`), the health check (:mod:`.doctor`) and the storage of state
documents (:mod:`.state`). A dataset lives in a local directory or under a ``gs://bucket/prefix``
(:mod:`.objects`: the Cloud Storage side, and why). Nothing here knows how a log line is read.

The public names are imported on first use (the store imports polars and pyarrow).
"""

from __future__ import annotations

from tierscope.reexport import TYPE_CHECKING, reexport_lazily

if TYPE_CHECKING:
    from tierscope.dataset.errors import DatasetBusyError, DatasetCorruptError, DatasetError, StateCorruptError
    from tierscope.dataset.store import AppendResult, Dataset

_ORIGINS = {
    "Dataset": "tierscope.dataset.store",
    "AppendResult": "tierscope.dataset.store",
    "DatasetError": "tierscope.dataset.errors",
    "DatasetBusyError": "tierscope.dataset.errors",
    "DatasetCorruptError": "tierscope.dataset.errors",
    "StateCorruptError": "tierscope.dataset.errors",
}

__all__ = [
    "AppendResult",
    "Dataset",
    "DatasetBusyError",
    "DatasetCorruptError",
    "DatasetError",
    "StateCorruptError",
]

__getattr__, __dir__ = reexport_lazily(__name__, _ORIGINS)
