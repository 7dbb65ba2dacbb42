"""What several tests share: the fake Cloud Logging server, builders of inputs, the browser driver.

``ROOT`` is the repository's root; ``SHARED`` the ``shared/`` folder beside it (real data that
tests read at test time and skip without).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
