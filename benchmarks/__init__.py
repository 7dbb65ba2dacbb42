"""Benchmarks: ``python -m benchmarks.run`` (see docs/benchmarks.md)."""

import os

#: The user's own ``_RJEM_MALLOC_CONF`` (None: unset), read before anything here imports polars:
#: importing polars sets it in this process's environment to polars' defaults (plus the user's),
#: which every benchmarked command would inherit in place of the setting tierscope chooses for
#: itself when none is given (:mod:`tierscope.cli.allocator`); :func:`benchmarks.measure.env`
#: passes this one on instead.
USER_MALLOC_CONF = os.environ.get("_RJEM_MALLOC_CONF")
