"""A target the registry knows but the kernel writer does not (gfx1250, ROCm 7.x's newest): a 7.x build
that names it still succeeds, with its solutions reported and left out and a loadable library."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.library.formats import read_dat
from tensile_lite.tcl import main
from tests.shared import shared_dir


def test_gfx1250_builds_an_empty_library_and_names_why(tmp_path: Path, toolchain,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    if toolchain.version[0] < 22:
        pytest.skip(f"gfx1250 needs LLVM 22; found {toolchain.describe()}")
    logic = shared_dir("logic7")
    out = tmp_path / "Tensile"
    rc = main(["--architecture=gfx1250;", "--logic-filter=gfx1250/GridBased/*", str(logic), str(out), "HIP"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "arch:gfx1250" in err and "left out" in err
    library = out / "library"
    master = next(library.rglob("TensileLibrary_lazy_gfx1250.dat"))
    assert read_dat(master)["library"]["type"] == "Hardware"
    assert next(library.rglob("Kernels.so-000-gfx1250.hsaco")).stat().st_size > 0
    assert not list(library.rglob("*.co"))  # nothing built: no placeholder code objects
