"""The host is written apart from the kernel writer: importing all of it loads nothing of tensile_lite.asm
(else the independence tests would compare the kernel's layout with itself)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys, pkgutil, importlib, tensile_lite.host as h
for m in pkgutil.iter_modules(h.__path__):
    importlib.import_module(f"tensile_lite.host.{m.name}")
print(sorted(n for n in sys.modules if n.startswith("tensile_lite.asm")))
"""


def asm_modules_loaded(code: str = CODE) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return res.stdout.strip()


def test_host_imports_nothing_of_the_kernel_writer() -> None:
    assert asm_modules_loaded() == "[]"


def test_the_check_sees_a_kernel_import() -> None:
    assert "tensile_lite.asm" in asm_modules_loaded(CODE.replace("import sys,", "import tensile_lite.asm.gemm.abi, sys,"))
