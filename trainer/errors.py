"""What the reference trainer raises (stdlib only: every TensorFlow task imports it)."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class TrainerError(TierscopeError):
    """Base class of the trainer's errors: a cluster, data or run directory that cannot be used."""
