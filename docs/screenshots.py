"""Regenerate the screenshots of the report (README.md, docs/report.md) from the demo:
``docs/report-1280.png`` (a 1280 x 800 laptop screen) and ``docs/report-1024.png`` (1024 x 800), the top
of the English report on the bundled 2016 logs, and ``docs/report-390.png``, the top 1,800 px of the same
report 390 px wide (a phone, scrolled down to the first runs of the table), drawn by headless Chromium with
the network off.

    python docs/screenshots.py            # writes docs/report-*.png
    python docs/screenshots.py --out DIR  # somewhere else

Needs ``chromium`` (Debian: ``apt-get install chromium``; ``$CHROMIUM`` names another binary) and tierscope
installed in the running Python. Exits 1 with one line when either is missing or the browser fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: (width, height) of each screenshot, in CSS pixels at scale 1. The phone's is as long as a few of its screens:
#: the answer, then the first runs of the table as cards (headless Chromium draws a page opened at a #section
#: blank, so the shot is of the top).
SIZES = ((1280, 800), (1024, 800), (390, 1800))
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--proxy-server=http://127.0.0.1:9",  # nothing is reachable: the report must not need the network
    "--virtual-time-budget=20000",  # let vega-embed draw the charts before the shot
)


def chromium() -> str:
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("chromium not found: apt-get install chromium, or set CHROMIUM to its path")


def demo_report(work: Path) -> Path:
    """The demo's English report, written under ``work``."""
    out = work / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "tierscope", "demo", "--out", str(out), "--lang", "en"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"tierscope demo failed: {done.stderr.strip().splitlines()[-1:]}")
    return out / "report.html"


def screenshot(browser: str, report: Path, width: int, height: int, png: Path, work: Path) -> Path:
    profile = Path(tempfile.mkdtemp(prefix="profile-", dir=work))
    command = [browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
    done = subprocess.run(
        [*command, f"--screenshot={png}", report.resolve().as_uri()], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0 or not png.exists():
        raise SystemExit(f"chromium did not write {png}: {done.stderr.strip()[-300:]}")
    return png


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="directory for report-<width>.png (default: docs/)")
    args = parser.parse_args(argv)
    browser = chromium()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tierscope-shots-") as tmp:
        work = Path(tmp)
        report = demo_report(work)
        written = [
            screenshot(browser, report, width, height, args.out / f"report-{width}.png", work)
            for width, height in SIZES
        ]
    for path in written:
        print(f"{path} ({path.stat().st_size:,} bytes)")
    return written


if __name__ == "__main__":
    main()
