"""tierscope: when you pay for a bigger scale tier, how much faster does training get?"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # Looked up on first use: importlib.metadata costs tens of milliseconds at start-up,
    # and only the report and --version need the version.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tierscope")
        except PackageNotFoundError:  # running from a source tree that was never installed
            return "0.0.0+source"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
