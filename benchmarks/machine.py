"""What the benchmark figures were measured on: CPUs, memory, Python, kernel, time."""
from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path


def describe() -> dict:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "memory": mem,
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "kernel": platform.release(), "date": time.strftime("%Y-%m-%d %H:%M %Z")}
