"""The compiled core: every `src/binlog_spec/**/_c*.pyx` becomes an extension module of the package.

The metadata is in pyproject.toml; this file only adds the extension modules. Where they cannot be
built (no C compiler, no Python headers, no Cython), the install goes on without them and warns: the
package then runs its pure-Python reference code (binlog_spec.compiled says which core runs, and
`binlog-spec --version` shows it). `make setup` builds them in place for the editable install.
"""
from __future__ import annotations

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
#: Compiler directives for every module (each .pyx may add its own in a `# cython:` header line).
DIRECTIVES = {"language_level": 3}


def _warn(message: str) -> None:
    print(f"WARNING: binlog-spec: {message}; the pure-Python core will run", file=sys.stderr)


def pyx_modules() -> list[tuple[str, str]]:
    """(module name, source path relative to this file) for every compiled module, sorted."""
    found = []
    for pyx in sorted((HERE / "src").glob("binlog_spec/**/_c*.pyx")):
        rel = pyx.relative_to(HERE / "src").with_suffix("")
        found.append((".".join(rel.parts), pyx.relative_to(HERE).as_posix()))
    return found


def extensions() -> list[Extension]:
    modules = [Extension(name, [source]) for name, source in pyx_modules()]
    if not modules:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _warn("Cython is not installed, the compiled modules are not built")
        return []
    # src/ on the include path: the modules cimport binlog_spec/binlog/_cbytes.pxd (inline readers)
    return cythonize(modules, compiler_directives=DIRECTIVES, quiet=True, include_path=[str(HERE / "src")])


class OptionalBuildExt(build_ext):
    """build_ext that turns a missing or failing C toolchain into a warning."""

    failed: set[str] = set()

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any toolchain failure: the pure core still works
            _warn(f"the compiled modules could not be built ({type(exc).__name__}: {exc})")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - no compiler, no Python.h, a linker error...
            self.failed.add(ext.name)
            _warn(f"{ext.name} could not be built ({type(exc).__name__}: {exc})")

    def copy_extensions_to_source(self) -> None:
        """In-place and editable builds copy what was built, not what failed."""
        every = self.extensions
        self.extensions = [ext for ext in every if ext.name not in self.failed]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
