"""tierscope: when you pay for a bigger scale tier, how much faster does training get?"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tierscope")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
