"""What several tests share: the fake Cloud Logging server, builders of inputs, the browser driver.

``ROOT`` is the repository's root; ``SHARED`` the ``shared/`` folder beside it, or beside a folder above it
(a worktree in a folder of worktrees): real data that tests read at test time and skip without.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared")
