"""Build scenarios end to end against a stand-in TensileCreateLibrary on a small fake dev set.

The stand-in writes what the real one does (library/*.dat, *.co holding a real kernel, temporaries under
TMPDIR), so the plumbing is checked: upstream argv, watched folders, kernel counting, shares, metrics.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import scenarios
from tensile_lite.codeobj.toolchain import Toolchain

_KERNEL = textwrap.dedent("""
    .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
    .text
    .globl bench_k
    .p2align 8
    .type bench_k,@function
    bench_k:
      s_endpgm
    .rodata
    .p2align 6
    .amdhsa_kernel bench_k
      .amdhsa_next_free_vgpr 1
      .amdhsa_next_free_sgpr 1
      .amdhsa_accum_offset 4
    .end_amdhsa_kernel
""")

# Stand-in TensileCreateLibrary: one .co (a copy of a real one) per logic file of the asked architectures.
_FAKE_TCL = textwrap.dedent("""
    import os, shutil, sys, time
    co, argv = sys.argv[1], sys.argv[2:]
    logic, out = argv[-3], argv[-2]
    archs = [a for arg in argv if arg.startswith("--architecture=") for a in arg.split("=", 1)[1].split("_")]
    assert argv[-1] == "HIP" and "--merge-files" in argv
    lib = os.path.join(out, "library")
    os.makedirs(lib, exist_ok=True)
    scratch = os.path.join(os.environ["TMPDIR"], "build_tmp.s")
    with open(scratch, "wb") as f:
        f.write(b"x" * 2**20)
    time.sleep(0.3)
    os.unlink(scratch)
    n = 0
    for root, _, names in os.walk(logic):
        for name in sorted(names):
            text = open(os.path.join(root, name)).read()
            if any(f"- {a}\\n" in text for a in archs):
                shutil.copy(co, os.path.join(lib, name.replace(".yaml", ".co")))
                n += 1
    for a in archs:
        open(os.path.join(lib, f"TensileLibrary_lazy_{a}.dat"), "wb").write(b"\\x80" * 10)
    print(n)
""")


def _logic(path: Path, arch: str, solutions: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sols = "".join(f"  - {{SolutionIndex: {i}}}\n" for i in range(solutions))
    path.write_text(f"- {{MinimumRequiredVersion: 4.33.0}}\n- x\n- {arch}\n- [Device 0]\n- {{}}\n-\n{sols}"
                    "- [2, 3, 0, 1]\n- []\n- null\n- null\n- DeviceEfficiency\n- GridBased\n")


@pytest.fixture
def fake_world(tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = tmp_path / "k.s"
    src.write_text(_KERNEL)
    subprocess.run([str(toolchain.assembler), "-x", "assembler", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a",
                    "-c", str(src), "-o", str(tmp_path / "k.o")], check=True)
    subprocess.run([str(toolchain.linker), "-shared", str(tmp_path / "k.o"), "-o", str(tmp_path / "k.co")],
                   check=True)
    root = tmp_path / "shared" / "logic" / "asm_full"
    for name, arch, n in (("a", "gfx90a", 10), ("b", "gfx942", 20), ("c", "gfx942", 30), ("d", "gfx90a", 40),
                          ("e", "gfx1100", 50)):
        _logic(root / arch / f"{name}.yaml", arch, n)
    monkeypatch.setenv("TENSILE_LITE_SHARED", str(tmp_path / "shared"))
    monkeypatch.setattr(scenarios, "require_tcl", lambda: None)
    monkeypatch.setattr(scenarios, "tcl_cmd", lambda argv: [sys.executable, "-c", _FAKE_TCL,
                                                             str(tmp_path / "k.co"), *argv])

    def no_inspect(name: str) -> None:
        raise scenarios.Skip(f"{name} left out in this test")

    monkeypatch.setattr(scenarios, "require_command", no_inspect)
    return tmp_path


def test_build_scenario_per_architecture(fake_world: Path) -> None:
    registry = scenarios.all_scenarios()
    assert {"build-gfx90a-j1", "build-gfx942-j2", "build-gfx1100-j2"} <= set(registry)
    result = scenarios.run_scenario(registry["build-gfx942-j2"], interval=0.05)
    assert result["status"] == "ok", result
    m = result["metrics"]
    assert m["kernels"] == 2 and m["files"] == 2 and m["jobs"] == 2
    assert m["out_co"] > 0 and m["out_dat"] == 10
    assert m["peak_temp_disk"] >= 2**20
    assert m["cpu_s_per_kernel"] == pytest.approx(m["cpu_s"] / 2, abs=1e-3)
    assert "--architecture=gfx942" in result["runs"][0]["cmd"]


def test_scaling_shares_by_weight(fake_world: Path) -> None:
    result = scenarios.run_scenario(scenarios.all_scenarios()["scale-gfx9"], interval=0.05)
    assert result["status"] == "ok", result
    parts = result["parts"]
    assert [parts[s]["weight"] for s in ("quarter", "half", "all")] == [20, 50, 100]
    assert [parts[s]["kernels"] for s in ("quarter", "half", "all")] == [1, 2, 4]
    assert parts["all"]["architectures"] == ["gfx90a", "gfx942"]
    assert result["metrics"]["kernels_all_over_quarter"] == 4.0
    assert result["details"]["weighed_by"].startswith("solutions")


def test_failed_build_is_reported(fake_world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenarios, "tcl_cmd", lambda argv: [
        sys.executable, "-c", "import sys; sys.exit('error: bad logic file x.yaml')"])
    result = scenarios.run_scenario(scenarios.all_scenarios()["build-gfx90a-j1"], interval=0.05)
    assert result["status"] == "failed"
    assert "exit 1" in result["reason"] and "bad logic file" in result["reason"]
