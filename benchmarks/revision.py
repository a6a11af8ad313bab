"""A commit's package as an importable folder, for benchmarking one revision whatever the tree holds."""
from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def package_snapshot(sha: str, root: Path) -> Path:
    """`root`, made once from `git archive` of commit `sha`: src/binlog_spec as binlog_spec/ and
    generated/ as binlog_spec/_generated/, so that PYTHONPATH=root imports that commit's package."""
    if (root / "binlog_spec").exists():
        return root
    tmp = root.with_name(root.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", sha, "src/binlog_spec", "generated"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
    (tmp / "src" / "binlog_spec").rename(tmp / "binlog_spec")
    (tmp / "generated").rename(tmp / "binlog_spec" / "_generated")
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root
