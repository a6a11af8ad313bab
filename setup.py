"""The compiled core: every `src/binlog_spec/**/_c*.pyx` becomes an extension module of the package.

The metadata is in pyproject.toml; this file only adds the extension modules. Where they cannot be
built (no C compiler, no Python headers, no Cython), the install goes on without them and warns: the
package then runs its pure-Python reference code (binlog_spec.compiled says which core runs, and
`binlog-spec --version` shows it). `make setup` builds them in place for the editable install.
"""
from __future__ import annotations

import os
import sys
import tempfile
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


#: Set to "zlib" to build the compiled CRC32 on zlib even where ISA-L is installed (tests of that build).
CRC32_ENV = "BINLOG_SPEC_CRC32"
#: A program that compiles and links only where ISA-L's CRC32 is there (Debian: libisal-dev).
_ISAL_PROBE = """#include <isa-l/crc.h>
int main(void) { unsigned char b[1] = {0}; return (int)(crc32_gzip_refl(0, b, 1) & 0); }
"""


def extensions() -> list[Extension]:
    # the C compiler finds binlog_spec/binlog/_crc32.h (the CRC32 of every module) under src/
    modules = [Extension(name, [source], include_dirs=[str(HERE / "src")], libraries=["z"])
               for name, source in pyx_modules()]
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

    def build_extensions(self) -> None:
        """The CRC32 (binlog/_crc32.h): ISA-L's where it compiles and links here, else zlib's."""
        isal = os.environ.get(CRC32_ENV, "") != "zlib" and self._links_isal()
        if isal:
            for ext in self.extensions:
                ext.define_macros.append(("BINLOG_SPEC_ISAL", "1"))
                ext.libraries.append("isal")
        else:
            print("binlog-spec: the compiled CRC32 is zlib's (ISA-L, Debian's libisal-dev, is faster)",
                  file=sys.stderr)
        # a build for the other CRC32 never reuses this one's objects or modules: its objects go to a folder
        # of their own, and a file naming the choice (rewritten when it changes) is a dependency of every module
        choice = "isal" if isal else "zlib"
        self.build_temp = os.path.join(self.build_temp, f"crc32-{choice}")
        os.makedirs(self.build_temp, exist_ok=True)
        marker = os.path.join(os.path.dirname(self.build_temp), "crc32-choice")
        if not os.path.exists(marker) or open(marker).read() != choice:
            with open(marker, "w") as f:
                f.write(choice)
        for ext in self.extensions:
            ext.depends.append(marker)
        super().build_extensions()

    def _links_isal(self) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write(_ISAL_PROBE)
            try:
                objects = self.compiler.compile([src], output_dir=tmp)
                self.compiler.link_executable(objects, "probe", output_dir=tmp, libraries=["isal"])
            except Exception:  # noqa: BLE001 - no header, no library: zlib's CRC32
                return False
        return True

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
