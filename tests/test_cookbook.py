"""Every recipe of docs/cookbook.md and of the README runs, as written, against the fixtures.

A runnable block is a fenced block right after an HTML comment `<!-- cookbook {...} -->` whose JSON
says which files the page's names stand for and what the result must show:
- `files`: {name on the page: `fixtures/...` or `corpus:DIR/FILE[:BYTES]`} (BYTES: the file's first
  bytes only; `MyFlash/haha.000005` was rebuilt from an xxd dump that added one byte after its last event);
- `stdout`: texts the block's standard output holds; `lines`: its number of lines;
- `server`: texts of what `mysql` / `mariadb` were fed (they stand for a server and record their input);
- `absent`: texts found neither in the output nor in what the server was fed;
- `dump`: what `mysqldump` prints (it stands for the server's dump);
- `python`: the block is Python, run with this interpreter; `parquet`: {folder: "*" or "db.table"},
  whose row count must be the number of row changes `mariadb-binlog -v` printed for the fixture
  (fixtures/demo/mariadb-binlog.txt), of every table or of that table.
Shell blocks run under `bash -euo pipefail`, so every command of a pipe must succeed (exit code 0).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, ROOT

MARK = re.compile(r"^<!-- cookbook (\{[^\n]*\}) -->\n```(\w+)\n(.*?)^```$", re.M | re.S)
PAGES = [ROOT / "docs" / "cookbook.md", ROOT / "README.md"]


def blocks(page: Path) -> list[tuple[str, dict, str, str]]:
    text = page.read_text(encoding="utf-8")
    return [(f"{page.name}:{text[:m.start()].count(chr(10)) + 2}", json.loads(m.group(1)), m.group(2), m.group(3))
            for m in MARK.finditer(text)]


ALL = [b for page in PAGES for b in blocks(page)]


def _place(spec: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if spec.startswith("corpus:"):
        name, _, size = spec[len("corpus:"):].partition(":")
        data = (CORPUS / name).read_bytes()
        dest.write_bytes(data[:int(size)] if size else data)
    else:
        dest.write_bytes((ROOT / spec).read_bytes())


def _shims(bin_dir: Path, dump: str | None, client: list[str] | None = None) -> None:
    bin_dir.mkdir()
    server = f'exec {shlex.join([shutil.which(client[0]), *client[1:]])} "$@"\n' if client else 'cat >> "$COOKBOOK_SERVER_INPUT"\n'
    scripts = {"binlog-spec": f'exec {shlex.quote(sys.executable)} -m binlog_spec "$@"\n',
               "mysql": server, "mariadb": server,
               "mysqldump": f"printf '%s' {shlex.quote(dump or '')}\n"}
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/bash\n" + body)
        path.chmod(0o755)


def _mariadb_binlog_rows(table: str) -> int:
    text = (FIXTURES / "demo" / "mariadb-binlog.txt").read_text(encoding="utf-8")
    heads = re.findall(r"^### (?:INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\.`([^`]*)`", text, re.M)
    return sum(1 for db, t in heads if table in ("*", f"{db}.{t}"))


def test_the_cookbook_has_the_six_recipes_and_every_block_is_run():
    text = (ROOT / "docs" / "cookbook.md").read_text(encoding="utf-8")
    fences = re.findall(r"^```(\w+)\n", text, re.M)
    assert len(fences) == len(blocks(ROOT / "docs" / "cookbook.md")), "a code block of the cookbook is not run"
    for words in ("undo a bad UPDATE", "point-in-time recovery around a DROP TABLE", "who changed row",
                  "the biggest transactions yesterday", "into Parquet with Spark", "MySQL 5.7 binlog without"):
        assert re.search(rf"^## .*{re.escape(words)}", text, re.M), words


def _run(spec: dict, lang: str, code: str, tmp_path: Path, client: list[str] | None = None):
    """Run a block in a fresh folder holding its files: (exit code, stdout, stderr, what the server was fed, folder).
    With `client`, `mysql` and `mariadb` are that real client (a private server) instead of a recorder."""
    work = tmp_path / "work"
    work.mkdir()
    for name, source in spec["files"].items():
        _place(source, work / name)
    _shims(tmp_path / "bin", spec.get("dump"), client)
    server_input = tmp_path / "server-input.sql"
    server_input.touch()
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "COOKBOOK_SERVER_INPUT": str(server_input), "PYTHONPATH": str(ROOT / "src"),
           "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    if spec.get("python"):
        assert lang == "python"
        (work / "recipe.py").write_text(code)
        argv = [sys.executable, "recipe.py"]
    else:
        assert lang == "sh"
        argv = ["bash", "-euo", "pipefail", "-c", code]
    r = subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=600)
    return (r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"),
            server_input.read_text(encoding="utf-8", errors="replace"), work)


@pytest.mark.parametrize("where, spec, lang, code", ALL, ids=[b[0] for b in ALL])
def test_recipe_runs_and_shows_what_the_page_says(where, spec, lang, code, tmp_path):
    code_, out, err, fed, work = _run(spec, lang, code, tmp_path)
    assert code_ == 0, f"{where}: exit {code_}\n{err[-3000:]}"
    for text in spec.get("stdout", []):
        assert text in out, f"{where}: {text!r} not in the output:\n{out[:3000]}"
    for text in spec.get("server", []):
        assert text in fed, f"{where}: {text!r} not in what the server was fed:\n{fed[:3000]}"
    for text in spec.get("absent", []):
        assert text not in out and text not in fed, f"{where}: {text!r} should not be there"
    if "lines" in spec:
        assert len(out.splitlines()) == spec["lines"], f"{where}: output:\n{out}"
    for folder, table in spec.get("parquet", {}).items():
        import pyarrow.parquet as pq
        rows = pq.read_table(work / folder).num_rows
        assert rows == _mariadb_binlog_rows(table) > 0, (where, folder, rows)


def test_the_undo_recipe_gives_the_server_back_its_table_before_the_bad_update(tmp_path):
    """The cookbook's undo, fed to a real server that ran fixtures/demo's workload: the customers table is
    as the server had it before the bad UPDATE (the workload's last statement)."""
    sys.path.insert(0, str(FIXTURES))
    from mariadb_server import MariaDBServer
    workload = (FIXTURES / "demo" / "workload.sql").read_text(encoding="utf-8")
    before_bad, bad = workload.rsplit("SET TIMESTAMP=1767225900;", 1)
    assert "UPDATE customers SET vip=1" in bad
    (where, spec, lang, code), = [b for b in ALL if b[0].startswith("cookbook.md") and "--rollback" in b[3]
                                  and "--start-datetime" in b[3]
                                  and "--minimal-update" not in b[3]]     # (the undo of the bad UPDATE)
    table = "SELECT * FROM shop.customers ORDER BY id"
    with MariaDBServer() as srv:
        srv.sql(before_bad)
        expected = srv.sql(table)
        srv.sql("USE shop;\n" + bad)
        assert srv.sql(table) != expected
        code_, out, err, _, _ = _run(spec, lang, code, tmp_path, client=srv._client_args())
        assert code_ == 0, f"{where}: exit {code_}\n{err[-3000:]}"
        assert srv.sql(table) == expected


def test_the_minimal_undo_recipe_keeps_a_later_change_of_another_column(tmp_path):
    """The cookbook's --minimal-update undo, fed to a real server that ran fixtures/demo's workload and then
    changed another column of the row the bad UPDATE changed: `vip` is back as before the bad UPDATE, the
    later `email` stays (the state expected is made on the server: the later change run before the bad one)."""
    sys.path.insert(0, str(FIXTURES))
    from mariadb_server import MariaDBServer
    workload = (FIXTURES / "demo" / "workload.sql").read_text(encoding="utf-8")
    before_bad, bad = workload.rsplit("SET TIMESTAMP=1767225900;", 1)
    later = "UPDATE shop.customers SET email='ada@new.example' WHERE id=1;"
    (where, spec, lang, code), = [b for b in ALL if b[0].startswith("cookbook.md") and "--minimal-update" in b[3]
                                  and "--skip-conflicts" not in b[3]]
    table = "SELECT * FROM shop.customers ORDER BY id"
    with MariaDBServer() as srv:
        srv.sql(before_bad)
        srv.sql(later)
        expected = srv.sql(table)
        srv.sql("DROP DATABASE shop; RESET MASTER;")
        srv.sql(before_bad)
        srv.sql("USE shop;\n" + bad)
        srv.sql(later)
        code_, out, err, _, _ = _run(spec, lang, code, tmp_path, client=srv._client_args())
        assert code_ == 0, f"{where}: exit {code_}\n{err[-3000:]}"
        assert srv.sql(table) == expected
