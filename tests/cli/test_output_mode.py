"""-o FILE gets the mode a shell redirection gives it: a new file 0666 less the umask, an existing file its
own mode kept (the output is written to a temporary file renamed over FILE)."""
from __future__ import annotations

import io
import os
import stat
import subprocess

import pytest

from binlog_spec import cli

from conftest import FIXTURES

DEMO = str(FIXTURES / "demo" / "mariadb-bin.000001")
OUTPUTS = [["events"], ["sql", "--sql2"], ["sql", "--output-format", "binlog"]]


def run_under(umask: int, *argv) -> int:
    old = os.umask(umask)
    try:
        return cli.main(list(argv), io.StringIO(), io.StringIO())
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def shell_mode(tmp_path, umask: int) -> int:
    """The mode the shell gives a file it creates by a redirection under `umask`."""
    target = tmp_path / f"shell-{umask:o}"
    subprocess.run(["sh", "-c", f"umask {umask:03o}; : > '{target}'"], check=True)
    return mode(target)


@pytest.mark.parametrize("command", OUTPUTS, ids=" ".join)
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_output_file_honours_the_umask_as_a_shell_redirection(tmp_path, command, umask):
    target = tmp_path / "out"
    assert run_under(umask, *command, "-o", str(target), DEMO) == 0
    assert mode(target) == shell_mode(tmp_path, umask) == 0o666 & ~umask


@pytest.mark.parametrize("command", OUTPUTS, ids=" ".join)
@pytest.mark.parametrize("existing", [0o644, 0o640])
def test_an_existing_output_file_keeps_its_mode_when_replaced(tmp_path, command, existing):
    target = tmp_path / "out"
    target.write_text("old\n")
    target.chmod(existing)
    assert run_under(0o077, *command, "-o", str(target), DEMO) == 0
    assert mode(target) == existing and target.read_bytes() != b"old\n"
