"""Start a command and report its wall time and resource use: ``python -S spawn.py OUT TIMEOUT CMD...``.

A separate small launcher because Linux carries the RSS high-water mark of the process
that forks into the child's ``ru_maxrss``: measured straight from the benchmark (which
holds generated data), every child would report at least the benchmark's own size. This
launcher is a few MB. A command still running after TIMEOUT seconds (0: no limit) is
killed. Writes JSON to OUT: ``wall_s``, ``cpu_s`` (user + system), ``peak_rss_kb``,
``timed_out``; exits with the command's exit code. Standard library only.
"""

import json
import os
import signal
import sys
import time


def main() -> int:
    out, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG if timeout else 0)
        if done:
            break
        if time.perf_counter() - start > timeout:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.01)
    wall = time.perf_counter() - start
    with open(out, "w") as fh:
        json.dump(
            {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_kb": usage.ru_maxrss,
             "timed_out": timed_out},
            fh,
        )  # fmt: skip
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
