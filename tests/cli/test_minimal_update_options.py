"""sql --minimal-update and --skip-conflicts on the command line (issue 31): where they do not apply, one line
names why and the exit code is 2, nothing written; --skip-conflicts writes the undo of the rows not in conflict
after the whole input was checked, names the others as the exit-5 report does, and exits 1."""
from __future__ import annotations

import io

import pytest

from binlog_spec.cli import EXIT_USAGE, EXIT_WARNINGS, main
from conftest import FIXTURES

TYPES = FIXTURES / "types-full" / "mariadb-bin.000001"


def run(argv: list) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return out.getvalue(), err.getvalue(), code


@pytest.mark.parametrize("argv, message", [
    (["--minimal-update"], "--minimal-update applies to the statements of --sql or --sql2"),
    (["--minimal-update", "--rollback"], "--minimal-update applies to the statements of --sql or --sql2"),
    (["--minimal-update", "--output-format", "binlog", "-o", "x.bin"],
     "--minimal-update applies to the statements of --sql or --sql2"),
    (["--sql2", "--minimal-update", "--replace"], "--minimal-update does not go with --replace"),
    (["--rollback", "--skip-conflicts"], "--skip-conflicts applies to the statements of --sql or --sql2"),
    (["--sql2", "--skip-conflicts"], "--skip-conflicts applies to --rollback"),
    (["--sql2", "--rollback", "--skip-conflicts", "--force"], "--skip-conflicts does not go with --force"),
], ids=["base64", "base64-rollback", "binlog", "replace", "skip-base64", "skip-forward", "skip-force"])
def test_the_options_where_they_do_not_apply_exit_2_naming_why(argv, message, tmp_path):
    out, err, code = run(["sql", *argv, TYPES])
    assert (out, code) == ("", EXIT_USAGE)
    assert err.startswith(f"binlog-spec: error: {message}") and err.count("\n") == 1


def test_skip_conflicts_writes_the_other_rows_and_names_the_conflicts():
    window = ["--rollback", "--stop-position", 60000, TYPES]
    out, refused, code = run(["sql", "--sql2", *window])
    assert (out, code) == ("", 5)
    named = [line for line in refused.splitlines() if line.startswith("binlog-spec: conflict: ")]
    assert len(named) == 13
    out, err, code = run(["sql", "--sql2", "--skip-conflicts", *window])
    assert code == EXIT_WARNINGS
    assert [line for line in err.splitlines() if line.startswith("binlog-spec: conflict: ")] == named
    assert err.splitlines()[-1].startswith("binlog-spec: warning: 13 conflicts: ")
    forced, _, _ = run(["sql", "--sql2", "--force", *window])
    kept, every = out.splitlines(), forced.splitlines()
    assert kept[:3] == every[:3] and kept[-1] == "COMMIT;"
    left_out = [line for line in every if line not in kept]
    assert left_out and all(line.startswith(("UPDATE ", "INSERT ", "DELETE ")) for line in left_out)
    assert len(left_out) >= 13
