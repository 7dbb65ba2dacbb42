"""Start a command and report its wall time and resource use: ``python -S spawn.py OUT CMD...``.

A separate small launcher because Linux carries the RSS high-water mark of the process
that forks into the child's ``ru_maxrss``: measured straight from the benchmark (which
holds generated data), every child would report at least the benchmark's own size. This
launcher is a few MB. Writes JSON to OUT: ``wall_s``, ``cpu_s`` (user + system),
``peak_rss_kb``; exits with the command's exit code. Standard library only.
"""

import json
import os
import sys
import time


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    with open(out, "w") as fh:
        json.dump({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_kb": usage.ru_maxrss}, fh)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
