"""The package's layers, imported one way: binlog <- rows <- stream <- output / analysis <- api <- spark, cli.

errors.py, options.py and compiled.py sit under everything and import nothing of the package; only binlog/spec.py
imports the generated parser; spark/ and cli/ never import each other; no module is over 500 lines.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "binlog_spec"

#: Layer of each part of the package (first component under binlog_spec), lowest first.
RANK = {"errors": 0, "options": 0, "compiled": 0, "binlog": 1, "rows": 2, "stream": 3, "output": 4, "analysis": 4,
        "api": 5, "__init__": 5, "spark": 6, "cli": 6, "__main__": 7}
#: Parts of one rank that must not import each other.
SIBLINGS = [{"output", "analysis"}, {"spark", "cli"}]
MAX_LINES = 500


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def part_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["binlog_spec", *parts])


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import of binlog_spec in `path`, wherever it stands (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod == "binlog_spec":  # `from binlog_spec import x`: x is the module (or a name of __init__)
                found += [(node.lineno, f"binlog_spec.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, mod))
    return [(line, m) for line, m in found if m == "binlog_spec" or m.startswith("binlog_spec.")]


def target_part(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1] if parts[1] in RANK or parts[1] == "_generated" else "__init__"


def violations(path: Path) -> list[str]:
    src = part_of(path)
    out = []
    for line, mod in imported(path):
        dst = target_part(mod)
        where = f"{path.relative_to(PACKAGE)}:{line} imports {mod}"
        if dst == "_generated":
            if path.relative_to(PACKAGE).as_posix() != "binlog/spec.py":
                out.append(where + " (only binlog/spec.py imports generated/)")
            continue
        if src == dst:
            continue
        if RANK[src] == 0:
            out.append(where + f" ({src}.py imports nothing of the package)")
        elif RANK[dst] > RANK[src]:
            out.append(where + f" (layer {src} imports the higher layer {dst})")
        elif any({src, dst} <= pair for pair in SIBLINGS):
            out.append(where + f" ({src} and {dst} are siblings and never import each other)")
    return out


def test_every_import_points_down_the_layers():
    found = [v for p in modules() for v in violations(p)]
    assert not found, "\n".join(found)


def test_every_module_belongs_to_a_known_layer():
    assert {part_of(p) for p in modules()} <= set(RANK)


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    fake = PACKAGE / "rows" / "x.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from binlog_spec.output import jsonenc\n"
                        "def f():\n    from binlog_spec import cli\n")
    assert [v.split(" (")[1] for v in violations(fake)] == ["layer rows imports the higher layer output)",
                                                            "layer rows imports the higher layer cli)"]


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_is_over_500_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines"
