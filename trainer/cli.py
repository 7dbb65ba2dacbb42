"""``tierscope train`` and ``tierscope spec``: thin wrappers over :mod:`trainer`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the trainer's commands to ``app``. TensorFlow is imported only when they run."""
