"""`pip install .` gives a working package without node: the wheel carries the generated parsers."""
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile

from binlog_spec import compiled
from conftest import FIXTURES, ROOT


def test_wheel_installs_and_runs_without_node(tmp_path):
    wheels = tmp_path / "wheels"
    # built with zlib's CRC32, as where ISA-L is not installed (the tests' in-place build has ISA-L's)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, env={**os.environ, "BINLOG_SPEC_CRC32": "zlib"})
    (wheel,) = wheels.glob("binlog_spec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "binlog_spec/_generated/binlog.py" in names and "binlog_spec/binlog/reader.py" in names
    # the compiled core, built by `pip install .` where a C compiler exists (this machine has one)
    assert any(n.startswith("binlog_spec/binlog/_cstream.") and n.endswith(".so") for n in names), names
    assert not [n for n in names if n.endswith((".pyx", ".pxd", ".pxi", ".c", ".h"))]
    # top level, beside the package: pyspark registers the DefaultSource of every `pyspark_*` module
    assert "pyspark_binlog.py" in names
    assert "from binlog_spec.spark import DefaultSource" in zipfile.ZipFile(wheel).read("pyspark_binlog.py").decode()
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
                   check=True, capture_output=True)
    # nothing but the venv on PATH: node cannot be found, nor the project's sources
    env = {"PATH": str(env_dir / "bin"), "HOME": str(tmp_path)}
    r = subprocess.run([str(env_dir / "bin" / "binlog-spec"), "events", "--format", "jsonl",
                        str(FIXTURES / "demo" / "mariadb-bin.000001")],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) > 30
    r = subprocess.run([str(env_dir / "bin" / "binlog-spec"), "--version"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, check=True)
    core = r.stdout.partition("compiled core (")[2].partition(")")[0].split(", ")
    assert sorted(core) == sorted(n.rpartition(".")[2] for n in compiled.MODULES), r.stdout
    assert r.stdout.rstrip().endswith("CRC32 by zlib"), r.stdout
    r = subprocess.run([str(py), "-c", "import binlog_spec, shutil; print(binlog_spec.__file__, shutil.which('node'))"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert str(env_dir) in r.stdout and r.stdout.strip().endswith("None")
    # what pyspark's lookup (pyspark/sql/worker/lookup_data_sources.py) iterates finds the module
    # (importing it needs pyspark, which this venv lacks: tests/spark/test_spark.py reads through it)
    r = subprocess.run([str(py), "-c", "import pkgutil; print(sorted(m.name for m in pkgutil.iter_modules() "
                        "if m.name.startswith('pyspark_')))"], capture_output=True, text=True, env=env, cwd=tmp_path,
                       check=True)
    assert r.stdout.strip() == "['pyspark_binlog']"


def test_the_development_venv_lists_the_spark_module_for_pyspark(tmp_path):
    """The venv `make` builds installs the project in editable mode, whose import finder
    pkgutil.iter_modules cannot list: the Makefile puts src/ on the path (a .pth file) so that
    pyspark's lookup of `pyspark_*` modules finds src/pyspark_binlog.py."""
    r = subprocess.run([sys.executable, "-c", "import pkgutil, pyspark_binlog; print(sorted(m.module_finder.path "
                        "for m in pkgutil.iter_modules() if m.name == 'pyspark_binlog'), pyspark_binlog.__file__)"],
                       capture_output=True, text=True, cwd=tmp_path, check=True)
    assert r.stdout.split() == [f"['{ROOT / 'src'}']", str(ROOT / "src" / "pyspark_binlog.py")]


def test_without_a_c_compiler_the_install_warns_and_the_pure_python_core_runs(tmp_path):
    """setup.py's build_ext turns a compiler that cannot run into a warning: the wheel has no extension
    module, and the package says so in `--version` and runs the pure-Python reference."""
    wheels = tmp_path / "wheels"
    source = tmp_path / "source"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(source)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--binary", "--output", str(tmp_path / "wip.patch")],
                   check=True)     # what is not committed yet, so that the test checks the working tree
    if (tmp_path / "wip.patch").stat().st_size:
        subprocess.run(["git", "-C", str(source), "apply", str(tmp_path / "wip.patch")], check=True)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(wheels), str(source)],
                       capture_output=True, text=True, env={**os.environ, "CC": str(tmp_path / "no-such-cc")})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "WARNING: binlog-spec: binlog_spec.binlog._cstream could not be built" in r.stdout + r.stderr
    (wheel,) = wheels.glob("binlog_spec-*.whl")
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(wheel).extractall(unpacked)
    assert not list(unpacked.rglob("*.so"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import binlog_spec, binlog_spec.cli; "
            "from binlog_spec import compiled; print(binlog_spec.__file__); print(compiled.describe())")
    env = {k: v for k, v in os.environ.items() if k != "BINLOG_SPEC_PURE"}
    r = subprocess.run([sys.executable, "-c", code, str(unpacked)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, check=True)
    where, core = r.stdout.splitlines()
    assert where.startswith(str(unpacked)) and core.startswith("pure-Python core ("), r.stdout
    for name in compiled.MODULES:
        assert f"{name.rpartition('.')[2]}: not built" in core, r.stdout
