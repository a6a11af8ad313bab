"""One measured child process: wall time, CPU time and peak RSS, pinned to given CPUs.

GNU `time` (/usr/bin/time) measures the peak RSS of its child alone; `os.wait4` would report at
least the benchmark script's own high-water mark, inherited through fork, so it is only the
fallback. Output goes to /dev/null or a temporary file, never a pipe, so that a child never waits
on the benchmark script.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time

GNU_TIME = shutil.which("time", path="/usr/bin:/bin")
TASKSET = shutil.which("taskset")
TIME_FORMAT = "maxrss_kib=%M user_s=%U sys_s=%S"


def run_child(cmd: list[str], env: dict | None = None, capture: bool = False, cpus: str | None = "0") -> dict:
    """Spawn `cmd` (pinned to `cpus` with `taskset -c`, unless None): its exit code, wall time from
    spawn to exit, CPU time (user + system), peak RSS in MiB, stdout (when captured, else
    /dev/null) and the tail of its stderr."""
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as tm:
        full = ([TASKSET, "-c", cpus] if cpus and TASKSET else []) + cmd
        if GNU_TIME:
            full = [GNU_TIME, "-o", tm.name, "-f", TIME_FORMAT, *full]
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out if capture else devnull, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        timed = dict(re.findall(r"(\w+)=([\d.]+)", tm.read()))
    if GNU_TIME and timed:
        rss, cpu = int(timed["maxrss_kib"]) / 1024, float(timed["user_s"]) + float(timed["sys_s"])
    else:  # an upper bound, see above
        rss, cpu = ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime
    return {"cmd": cmd, "rc": p.returncode, "wall_s": wall, "cpu_s": cpu, "maxrss_mib": rss, "stdout": stdout,
            "stderr": stderr[-3000:]}
