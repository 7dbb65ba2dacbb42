"""Durable file replacement for the dataset: the primitive of :mod:`tierscope.atomic`, re-exported.

Used for data files (:mod:`tierscope.dataset.store`, :mod:`tierscope.dataset.compact`) and
state documents (:mod:`tierscope.dataset.state`). The primitive lives outside the dataset room
because the trainer, which may not import the dataset, writes ``run.json`` the same way.
A kill leaves at most a ``.tmp-*`` file (:data:`TMP_PREFIX`), which the dataset's readers
ignore and the next locked writer removes.
"""

from __future__ import annotations

from tierscope.atomic import TMP_PREFIX, commit, fsync_dir, temp_path, write_bytes_atomic

__all__ = ["TMP_PREFIX", "commit", "fsync_dir", "temp_path", "write_bytes_atomic"]
