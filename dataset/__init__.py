"""The dataset: hive-partitioned Parquet that the collector writes and the analysis reads.

Schema (:mod:`.schema`), the store (:mod:`.store`: atomic appends, scans, reads), durable
writes (:mod:`.durable`), the lock (:mod:`.lock`), the compaction journal (:mod:`.journal`)
and compaction (:mod:`.compact`), the health check (:mod:`.doctor`) and the storage of state
documents (:mod:`.state`). A dataset lives in a local directory or under a ``gs://bucket/prefix``
(:mod:`.objects`: the Cloud Storage side, and why). Nothing here knows how a log line is read.
"""
