"""Hashes of what every command prints on every corpus and fixture file: stdout, stderr, exit code.

A refactoring that must not change behaviour records them before and after and compares:

    .venv/bin/python tools/output_hashes.py --out before.tsv     # at the starting commit
    ...                                                          # move the code
    .venv/bin/python tools/output_hashes.py --out after.tsv --compare before.tsv

The commands run in-process through the CLI's `main(argv, out, err)`, in `--jobs` worker
processes, with TZ=UTC. A binlog written with `-o` is hashed by its bytes, not its temporary name.
Fixtures are named relative to the checkout (the commands run in it), so two checkouts in two folders
(the starting commit in a worktree, the change in another) print the same names and compare.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BINLOG_SPEC_SHARED", ROOT.parent / "shared")).resolve()

#: (name, argv before the file); "{out}" is a temporary file for outputs that need -o.
COMMANDS: list[tuple[str, list[str]]] = [
    ("events-text", ["events"]),
    ("events-jsonl", ["events", "--format", "jsonl"]),
    ("rows-text", ["rows"]),
    ("rows-jsonl", ["rows", "--format", "jsonl"]),
    ("sql-base64", ["sql"]),
    ("sql-base64-vv", ["sql", "-vv"]),
    ("sql-base64-rollback", ["sql", "--rollback"]),
    ("sql-commented", ["sql", "--sql"]),
    ("sql-sql2", ["sql", "--sql2"]),
    ("sql-sql2-complete-insert", ["sql", "--sql2", "--complete-insert"]),
    ("sql-replace", ["sql", "--sql2", "--replace"]),
    ("sql-sql2-rollback", ["sql", "--sql2", "--rollback"]),
    ("sql-binlog", ["sql", "--output-format", "binlog", "-o", "{out}"]),
    ("sql-binlog-rollback", ["sql", "--output-format", "binlog", "--rollback", "-o", "{out}"]),
    ("analyze-text", ["analyze"]),
    ("analyze-markdown", ["analyze", "--format", "markdown"]),
    ("analyze-json", ["analyze", "--format", "json"]),
]


def binlog_files() -> list[Path]:
    corpus = SHARED / "corpus"
    names = [line.split("\t", 1)[0] for line in (corpus / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]
             if line.strip()]
    files = [corpus / n for n in names]
    files += sorted(p.relative_to(ROOT) for p in (ROOT / "fixtures").glob("*/*-bin.0*") if p.is_file())
    return [p for p in files if (ROOT / p).is_file()]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def run_one(job: tuple[str, list[str], str]) -> str:
    os.environ["TZ"] = "UTC"
    import time
    time.tzset()
    from binlog_spec.cli import main

    name, argv, path = job
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "out.bin")
        args = [a.replace("{out}", target) for a in argv] + [path]
        out, err = io.StringIO(), io.StringIO()
        try:
            code = main(args, out, err)
        except SystemExit as exc:        # argparse
            code = exc.code
        except Exception as exc:         # noqa: BLE001 - recorded, compared like any output
            code = f"raised {type(exc).__name__}: {exc}"
        written = Path(target).read_bytes() if os.path.exists(target) else b""
    stdout = out.getvalue().encode("utf-8", "surrogateescape") + written
    stderr = err.getvalue().encode("utf-8", "surrogateescape")
    return f"{path}\t{name}\t{_digest(stdout)}\t{_digest(stderr)}\t{code}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="TSV to write: file, command, sha256(stdout), sha256(stderr), exit")
    ap.add_argument("--compare", help="a TSV written before: print every line that differs, exit 1 if any")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", action="append", default=[], help="command names to run (default: all)")
    args = ap.parse_args()
    commands = [c for c in COMMANDS if not args.only or c[0] in args.only]
    out_path = Path(args.out).resolve()
    compare = Path(args.compare).resolve() if args.compare else None
    os.chdir(ROOT)                      # fixtures are relative names
    jobs = [(name, argv, str(path)) for path in binlog_files() for name, argv in commands]
    with ProcessPoolExecutor(args.jobs) as pool:
        lines = list(pool.map(run_one, jobs, chunksize=4))
    out_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} outputs of {len(commands)} commands on {len(jobs) // max(1, len(commands))} files "
          f"-> {out_path}")
    if compare is None:
        return 0
    before = {tuple(line.split("\t")[:2]): line for line in compare.read_text(encoding="utf-8").splitlines()}
    after = {tuple(line.split("\t")[:2]): line for line in lines}
    differ = [(before.get(k), after.get(k)) for k in sorted(before.keys() | after.keys()) if before.get(k) != after.get(k)]
    for old, new in differ:
        print(f"- {old}\n+ {new}")
    print(f"{len(differ)} of {len(after)} outputs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
