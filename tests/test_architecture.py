"""The package's layers, imported one way: binlog <- rows, remote <- stream <- output / analysis <- api <- spark, cli.

errors.py, options.py and compiled.py sit under everything and import nothing of the package; only binlog/spec.py
imports the generated parser; spark/ and cli/ never import each other; cli/ imports only api, the options, the
errors and compiled.py of the package. Inside the layers: no two modules import
each other, directly or through others (imports inside functions and under TYPE_CHECKING count, and so do those
within one folder); no folder holds more than 12 modules; no module (.py, .pyx and what a .pyx includes) is over
500 lines; no module of the package is imported under another name; every compiled module `_cX.pyx` is
named after its pure-Python twin `X.py` in its folder, and none reads the FDE or frames the window's events
but through binlog/_cbytes.pxd.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "binlog_spec"

#: Layer of each part of the package (first component under binlog_spec), lowest first.
RANK = {"errors": 0, "options": 0, "compiled": 0, "binlog": 1, "rows": 2, "stream": 3, "remote": 3.5, "output": 4, "analysis": 4,
        "api": 5, "__init__": 5, "spark": 6, "cli": 6, "__main__": 7}
#: Parts of one rank that must not import each other.
SIBLINGS = [{"output", "analysis"}, {"spark", "cli"}]
MAX_LINES = 500
#: Modules (.py but __init__.py, .pyx) a folder holds at most: past that, it is split by theme into subpackages.
MAX_MODULES = 12


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def sources() -> list[Path]:
    """Every source file of the package: Python modules, and the compiled ones with what they include."""
    return sorted(p for ext in ("py", "pyx", "pxd", "pxi") for p in PACKAGE.rglob(f"*.{ext}"))


def part_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["binlog_spec", *parts])


def from_module(node: ast.ImportFrom, package: str) -> str:
    """The dotted module a `from ... import` names, a relative one resolved against `package`."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    return ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import of binlog_spec in `path`, wherever it stands (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = from_module(node, package)
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


@pytest.mark.parametrize("path", sources(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_is_over_500_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines"


# ------------------------------------------------------------------------------ the command line
#: What cli/ may import of the package: the library's entry points (api, a package or not), the options, the
#: errors, the compiled core's names (--version), the package itself (its __version__, names of __init__) and
#: cli/ itself. The rest it reaches through api: the command line is a shell over the library.
CLI_MAY_IMPORT = {"api", "options", "errors", "compiled", "__init__", "cli"}


def cli_violations(path: Path) -> list[str]:
    """The imports of a module of cli/ that go past api and the options into the layers below."""
    if part_of(path) != "cli":
        return []
    return [f"{path.relative_to(PACKAGE)}:{line} imports {mod} (the command line calls only api and the options)"
            for line, mod in imported(path) if target_part(mod) not in CLI_MAY_IMPORT]


def test_the_command_line_calls_only_api_and_the_options():
    found = [v for p in modules() for v in cli_violations(p)]
    assert not found, "\n".join(found)


def test_the_checker_sees_the_command_line_reach_past_api(monkeypatch):
    fake = PACKAGE / "cli" / "x.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        "import binlog_spec\nfrom binlog_spec import api, compiled\nfrom binlog_spec.api import Event\n"
        "from binlog_spec.options import ReadOptions\nfrom binlog_spec.errors import BinlogError\n"
        "from binlog_spec.cli import jobs\nfrom . import arguments\nfrom binlog_spec import __version__\n"
        "from binlog_spec.stream.filters import FilterOptions\n"
        "def f():\n    from binlog_spec.binlog import reader\n    from ..rows.ddl import schema\n"))
    assert [v.split(" (")[0] for v in cli_violations(fake)] == [
        "cli/x.py:9 imports binlog_spec.stream.filters", "cli/x.py:11 imports binlog_spec.binlog",
        "cli/x.py:12 imports binlog_spec.rows.ddl"]
    assert cli_violations(PACKAGE / "spark" / "x.py") == []      # (spark/ reads the layers below itself)


# ----------------------------------------------------------------------------------------- cycles
def graph_of(texts: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of `texts` it imports, wherever the import stands. `texts`: module name ->
    (source, whether it is a package's __init__). `from p import x` imports the module p.x when there
    is one, else p (a name of p/__init__.py); importing p.x runs p/__init__.py too, but that is no edge:
    a package is free to import its own modules."""
    graph: dict[str, set[str]] = {}
    for name, (text, is_package) in texts.items():
        package = name if is_package else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                mod = from_module(node, package)
                found.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in texts else mod for a in node.names)
        graph[name] = {m for m in found if m in texts and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other (strongly connected components of more than one)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def package_graph() -> dict[str, set[str]]:
    return graph_of({module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py") for p in modules()})


def test_no_two_modules_import_each_other():
    found = cycles(package_graph())
    assert not found, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_a_cycle_through_an_import_inside_a_function():
    texts = {"binlog_spec.stream.a": ("from binlog_spec.stream.b import x\n", False),
             "binlog_spec.stream.b": ("def f():\n    from binlog_spec.stream import a\n", False),
             "binlog_spec.stream.c": ("from binlog_spec.stream import a\n", False)}
    assert cycles(graph_of(texts)) == [["binlog_spec.stream.a", "binlog_spec.stream.b"]]


def test_the_checker_sees_a_cycle_through_a_package_and_a_type_checking_import():
    texts = {"binlog_spec.spark": ("def register():\n    from binlog_spec.spark.source import S\n", True),
             "binlog_spec.spark.source": ("from . import ddl\n", False),
             "binlog_spec.spark.ddl": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       "    from binlog_spec.spark import register\n", False),
             "binlog_spec.spark.options": ("from binlog_spec.spark import ddl\n", False)}
    assert cycles(graph_of(texts)) == [["binlog_spec.spark", "binlog_spec.spark.ddl", "binlog_spec.spark.source"]]
    texts["binlog_spec.spark.ddl"] = ("def read():\n    from binlog_spec.stream.filters import FilterOptions\n", False)
    assert cycles(graph_of(texts)) == []        # importing a package's module is no edge to the package


# ------------------------------------------------------------------------------------ folder size
def crowded(paths: list[Path]) -> dict[str, int]:
    """Folder -> its modules (.py but __init__.py, .pyx), for the folders holding more than MAX_MODULES."""
    count: dict[str, int] = {}
    for p in paths:
        if p.suffix in (".py", ".pyx") and p.name != "__init__.py":
            folder = p.parent.relative_to(PACKAGE).as_posix()
            count[folder] = count.get(folder, 0) + 1
    return {folder: n for folder, n in sorted(count.items()) if n > MAX_MODULES}


def test_no_folder_holds_more_than_12_modules():
    assert crowded(sources()) == {}


def test_the_checker_sees_a_crowded_folder():
    folder = PACKAGE / "rows"
    paths = [folder / f"m{i}.py" for i in range(12)] + [folder / "__init__.py", PACKAGE / "binlog" / "_cx.pyx"]
    assert crowded(paths) == {}
    assert crowded(paths + [folder / "_cm.pyx"]) == {"rows": 13}


def test_the_line_cap_counts_the_compiled_modules():
    assert {p.suffix for p in sources()} >= {".py", ".pyx", ".pxd"}
    assert PACKAGE / "output" / "rollback" / "_ccheck.pyx" in sources()


# ------------------------------------------------------------------------------ compiled twins
#: Compiled modules whose pure-Python twin is not a module of the package, each with its twin.
TWINLESS = {
    # kaitaistruct's KaitaiStream (a dependency), which spec.py rebinds to the compiled FastStream
    "binlog/_cstream.pyx",
}


def without_twin(paths: list[Path]) -> list[str]:
    """The compiled modules (`_cX.pyx`) with no pure-Python twin `X.py` beside them, the module they accelerate
    and are named after (`output/base64/_ctext.pyx` <-> `output/base64/text.py`), but those of TWINLESS."""
    present = set(paths)
    return [p.relative_to(PACKAGE).as_posix() for p in paths
            if p.suffix == ".pyx" and p.name.startswith("_c") and p.relative_to(PACKAGE).as_posix() not in TWINLESS
            and p.with_name(p.name[2:]).with_suffix(".py") not in present]


def test_every_compiled_module_is_named_after_its_pure_python_twin():
    assert without_twin(sources()) == []


def test_the_checker_sees_a_compiled_module_without_a_twin():
    folder = PACKAGE / "output" / "base64"
    paths = [folder / "text.py", folder / "_ctext.pyx", PACKAGE / "binlog" / "_cstream.pyx"]
    assert without_twin(paths) == []
    assert without_twin(paths + [folder / "_cb64.pyx", PACKAGE / "rows" / "_ctext.pyx"]) == [
        "output/base64/_cb64.pyx", "rows/_ctext.pyx"]
    assert all((PACKAGE / name).exists() for name in TWINLESS)     # no stale exception


def own_preambles(texts: dict[str, str]) -> list[str]:
    """The compiled modules (name -> source text) that read the FDE's lengths (`post_header_len`) or frame the
    window's events up to the reader's own (START_ENCRYPTION_EVENT) themselves: binlog/_cbytes.pxd's read_fde and
    event_at are the one home of that preamble of every compiled loop."""
    return sorted(name for name, text in texts.items()
                  if name.endswith(".pyx") and ("post_header_len(" in text or "START_ENCRYPTION_EVENT" in text))


def test_the_compiled_loops_share_one_preamble():
    assert own_preambles({p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sources()}) == []


def test_the_checker_sees_a_loop_with_its_own_preamble():
    texts = {"binlog/_cbytes.pxd": "into.xid = fde.post_header_len(XID_EVENT)\n",
             "analysis/_ccollector.pyx": "read_fde(fde, LAYOUTS_AGREE, &self.lens)\n",
             "spark/_crecords.pyx": "self.lph_xid = fde.post_header_len(XID_EVENT)\n",
             "output/base64/_ctext.pyx": "if code == FORMAT_DESCRIPTION_EVENT or code == START_ENCRYPTION_EVENT:\n"}
    assert own_preambles(texts) == ["output/base64/_ctext.pyx", "spark/_crecords.pyx"]


# ------------------------------------------------------------------------------------- aliases
def renamed_imports(path: Path, text: str) -> list[str]:
    """The imports of a module of the package under another name (`from binlog_spec.rows import decoder
    as rows`): a module is named as it is everywhere. Names other than modules may be renamed."""
    known = {module_name(p) for p in modules()} | {module_name(p).removesuffix(".__init__") for p in modules()}
    known |= {".".join(["binlog_spec", *p.relative_to(PACKAGE).with_suffix("").parts]) for p in sources()}
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [f"{path.name}:{node.lineno} from {node.module} import {a.name} as {a.asname}"
                      for a in node.names if a.asname and a.asname != a.name and f"{node.module}.{a.name}" in known]
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} import {a.name} as {a.asname}"
                      for a in node.names if a.asname and a.name in known]
    return found


def test_no_module_is_imported_under_another_name():
    found = [r for p in modules() for r in renamed_imports(p, p.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_checker_sees_a_module_imported_under_another_name():
    text = ("from binlog_spec.rows import decoder as rows\nfrom binlog_spec.rows.decoder import RowDecoder as D\n"
            "import binlog_spec.binlog.writer as w\nfrom binlog_spec.rows import decoder\n")
    assert renamed_imports(PACKAGE / "x.py", text) == ["x.py:1 from binlog_spec.rows import decoder as rows",
                                                       "x.py:3 import binlog_spec.binlog.writer as w"]


def test_every_subpackage_ships_in_the_wheel():
    """pyproject.toml lists the packages of the wheel one by one: a subpackage left out is missing from
    `pip install .` while every test run from the sources passes."""
    import tomllib
    listed = set(tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert folders - listed == set()


#: Test folders that are no folder of the package: the fuzzing harness and the randomized server test.
TESTS = Path(__file__).resolve().parent
NOT_MIRRORED = {"fuzz", "proof"}


def unmirrored(test_dirs: list[Path], tests: Path = TESTS, package: Path = PACKAGE) -> list[str]:
    """The test folders (relative to `tests`) that have no folder of that name in the package."""
    out = []
    for d in test_dirs:
        rel = d.relative_to(tests)
        if rel.parts[0] in NOT_MIRRORED or "__pycache__" in rel.parts:
            continue
        if not (package / rel / "__init__.py").is_file():
            out.append(rel.as_posix())
    return sorted(out)


def test_the_tests_mirror_the_package():
    """tests/output/base64/ holds the tests of binlog_spec/output/base64/, and so on: a test folder is named
    after the package folder whose modules it tests."""
    assert unmirrored([d for d in TESTS.rglob("*") if d.is_dir()]) == []


def test_the_checker_sees_a_test_folder_the_package_lacks():
    dirs = [TESTS / "output" / "base64", TESTS / "output" / "conflicts", TESTS / "proof" / "cases"]
    assert unmirrored(dirs) == ["output/conflicts"]
