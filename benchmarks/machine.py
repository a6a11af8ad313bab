"""What the benchmark figures were measured on: CPUs, memory, Python, kernel, time."""
from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path


def describe() -> dict:
    model = "?"
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("model name", "cpu family", "model", "cpu MHz") and k.strip() not in info:
                info[k.strip()] = v.strip()
            if not line.strip() and info:
                break          # the first CPU's block is enough
        model = info.get("model name", model)
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "cpu": cpu_label(model, info), "memory": mem,
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "kernel": platform.release(), "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def cpu_label(model: str, info: dict) -> str:
    """The model name with what a virtual machine's generic name hides: its family/model numbers and
    clock, e.g. 'Intel(R) Xeon(R) Processor (family 6 model 167, 2.6 GHz)'."""
    extra = []
    if info.get("cpu family") and info.get("model"):
        extra.append(f"family {info['cpu family']} model {info['model']}")
    try:
        if "Hz" not in model and info.get("cpu MHz"):
            extra.append(f"{float(info['cpu MHz']) / 1000:.1f} GHz")
    except ValueError:
        pass
    return f"{model} ({', '.join(extra)})" if extra else model
