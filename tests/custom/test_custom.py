"""Custom kernels (tensile_lite/custom): where their folder is found, the missing-file error, the merge of
custom.config over the solution, and the library built from the dev set's five kernels against upstream's
code objects, symbol by symbol (../shared/custom_kernels, ../shared/reference/upstream-lib/gfx942)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tensile_lite.asm.gemm import decide
from tensile_lite.build import kernel_source_of
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.custom import ENV, LAYOUT, CustomBuild, CustomKernel, find_folder, merge
from tensile_lite.errors import LogicError, Where
from tensile_lite.library.formats import read_dat
from tensile_lite.logic import read_logic_file
from tensile_lite.model import Solution
from tensile_lite.verify.runner import verify_library
from tests.shared import dev_logic_files, shared_dir
from tests.tcl.runtime_probe import find_probe, run_probe, runtime_faults
from tests.tcl.test_build import tcl

BBS = "aquavanjaram_Cijk_Alik_Bljk_BBS_BH_UserArgs"  # two solutions name custom kernels (no ProblemType block)
F8H = "aquavanjaram_Cijk_Ailk_Bljk_F8H_HHS_BH_Bias_HAS_SAB_SAV_UserArgs"  # config with a ProblemType


def _kernels_folder() -> Path:
    return shared_dir("custom_kernels", *LAYOUT)


def _logic(stem: str) -> Path:
    found = [p for p in dev_logic_files() if p.stem == stem]
    if not found:
        pytest.skip(f"dev-set file {stem} not available")
    return found[0]


def _customs(path: Path, **kw: Any) -> list[Solution]:
    return [s for s in read_logic_file(path, **kw).solutions if s.is_custom]


# --- where the folder is found -------------------------------------------------------------------------


def _tree(root: Path) -> Path:
    folder = root.joinpath(*LAYOUT)
    folder.mkdir(parents=True)
    return folder


def test_flag_wins_over_environment_over_walking_up(tmp_path: Path) -> None:
    hip = tmp_path / "hipBLASLt"
    above = _tree(hip)
    logic = hip / "library" / "src" / "Tensile" / "Logic"
    logic.mkdir(parents=True)
    flag_root, env_root = tmp_path / "flag", tmp_path / "env"
    flag, env = _tree(flag_root), _tree(env_root)
    assert find_folder(flag_root, logic, {ENV: str(env_root)}).path == flag
    assert find_folder(None, logic, {ENV: str(env_root)}).path == env
    assert find_folder(None, logic, {}).path == above
    # a folder given explicitly may also be the CustomKernels folder itself
    assert find_folder(flag, logic, {}).path == flag
    assert find_folder(None, logic / "file.yaml", {ENV: str(env)}).path == env
    nothing = find_folder(None, tmp_path / "elsewhere", {})
    assert nothing.path is None and "walking up" in nothing.origin


def test_reader_takes_the_flag_over_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "empty"))
    with pytest.raises(LogicError):
        _customs(_logic(BBS))
    got = _customs(_logic(BBS), custom_kernels_dir=shared_dir("custom_kernels"))
    assert got and all(s.custom_source and Path(s.custom_source.path).parent == _kernels_folder() for s in got)


def test_missing_kernel_is_one_error_naming_solution_and_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    root = tmp_path / "logic"
    root.mkdir()
    (root / f"{BBS}.yaml").write_bytes(_logic(BBS).read_bytes())
    empty = tmp_path / "kernels"
    empty.mkdir()
    for extra in ((), ("--custom-kernels-dir", str(empty))):
        code = tcl(root, tmp_path / "out", "--architecture=gfx942", *extra)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert len(err) == 1 and err[0].startswith("TensileCreateLibrary: error:")
        line = err[0]
        assert f"{BBS}.yaml" in line and "solution #6" in line and "CustomKernelName" in line
        assert "Custom_Cijk_Alik_Bljk_BBS_BH_MT128x16x128_MI16x16x1_SN_GSUM_K1_MIWT2_1_01.s not found" in line
        assert (f"not in {empty}" if extra else f"CustomKernels folder in {root} or any folder above it") in line
    assert not (tmp_path / "out" / "library" / "TensileManifest.txt").exists()


# --- the merge -----------------------------------------------------------------------------------------


def test_config_is_merged_as_upstream_merges_it() -> None:
    """The kernel's InternalSupportParams win, the solution's add the keys they lack; the config's keys
    replace the solution's; the kernel's file is attached and the gate builds it from there."""
    for stem in (BBS, F8H):
        for sol in _customs(_logic(stem)):
            text = Path(sol.custom_source.path).read_text()
            config = yaml.safe_load(text[text.index("\n---\n") + 5:text.index("\n...\n")])["custom.config"]
            isp = sol.params["InternalSupportParams"]
            assert {k: bool(v) if isinstance(v, bool) else v for k, v in config["InternalSupportParams"].items()} \
                == {k: isp[k] if k == "KernArgsVersion" else bool(isp[k]) for k in config["InternalSupportParams"]}
            for key in ("DepthU", "StaggerU", "GlobalSplitU", "WorkGroupMapping", "1LDSBuffer"):
                if key in config:
                    assert sol.params[key] == int(config[key]), (sol.custom_kernel_name, key)
            assert sol.kernel_language == "Assembly"
            verdict = decide(sol)
            assert isinstance(verdict, CustomBuild) and verdict.source == sol.custom_source
            kernel = kernel_source_of(sol, sol.custom_kernel_name, decision=verdict)
            assert isinstance(kernel, CustomKernel)
            assert kernel.assembly_text() == text  # assembled unchanged


def _sol_and_folder(tmp_path: Path, config: str) -> tuple[Solution, Any]:
    sol = _customs(_logic(BBS))[0]
    folder = tmp_path / "k"
    folder.mkdir(exist_ok=True)
    (folder / f"{sol.custom_kernel_name}.s").write_text(
        f".text\n.amdgpu_metadata\n---\ncustom.config:\n{config}amdhsa.version: [1, 1]\n...\n.end_amdgpu_metadata\n")
    return sol, find_folder(folder, tmp_path, {})


def test_solution_keys_fill_the_kernels_support_params(tmp_path: Path) -> None:
    sol, folder = _sol_and_folder(tmp_path, "   InternalSupportParams: {KernArgsVersion: 1}\n   StaggerU: 8\n")
    before = dict(sol.params["InternalSupportParams"])  # the dev kernel's, merged over the file's
    assert before["KernArgsVersion"] == 0 and len(before) == 5
    merged = merge(sol, folder, Where(file="x.yaml"))
    assert dict(merged.params["InternalSupportParams"]) == {**before, "KernArgsVersion": 1}
    assert merged.params["StaggerU"] == 8 and merged.runtime.stagger_u == 8
    assert merged.custom_source is not None and merged.custom_source != sol.custom_source


@pytest.mark.parametrize(("config", "message"), [
    ("   StaggerU: 8\n", "InternalSupportParams with a KernArgsVersion"),
    ("   InternalSupportParams: {SupportUserGSU: True}\n", "InternalSupportParams with a KernArgsVersion"),
    ("   InternalSupportParams: {KernArgsVersion: 0}\n   ProblemType: {OperationType: GEMM, DataType: h, "
     "DestDataType: h, ComputeDataType: s, HighPrecisionAccumulate: True, TransposeA: True, TransposeB: False, "
     "UseBeta: True, Batched: True}\n", "another problem type"),
])
def test_bad_config_is_a_clear_error(tmp_path: Path, config: str, message: str) -> None:
    sol, folder = _sol_and_folder(tmp_path, config)
    with pytest.raises(LogicError, match=message) as err:
        merge(sol, folder, Where(file="x.yaml"))
    assert err.value.where.solution_index == sol.index and err.value.where.parameter in ("CustomKernelName",
                                                                                          "ProblemType")


# --- the library against upstream's ---------------------------------------------------------------------


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _only_custom(src: Path, dest: Path) -> int:
    """A copy of a list-form logic file keeping only its custom-kernel solutions and their table rows."""
    data = yaml.load(src.read_text(), Loader=yaml.CSafeLoader)
    keep = [i for i, s in enumerate(data[5]) if s.get("CustomKernelName")]
    new = {old: pos for pos, old in enumerate(keep)}
    data[5] = [data[5][i] for i in keep]
    data[7] = [[row[0], [new[row[1][0]], *row[1][1:]]] for row in data[7] if row[1][0] in new]
    dest.write_text(yaml.dump(data, Dumper=_NoAliases))
    return len(keep)


@pytest.fixture(scope="module")
def custom_library(tmp_path_factory: pytest.TempPathFactory, toolchain: Any) -> Path:
    root = tmp_path_factory.mktemp("custom-logic")
    n = 0
    for path in dev_logic_files():
        if path.stem.startswith("aquavanjaram_") and "gfx942" in path.parts and "CustomKernelName: Custom" in \
                path.read_text():
            n += _only_custom(path, root / path.name)
    assert n == 8
    out = tmp_path_factory.mktemp("custom-out")
    assert tcl(root, out, "--architecture=gfx942", "--strict") == 0
    return out / "library"


def test_library_holds_upstreams_custom_kernels_symbol_by_symbol(custom_library: Path) -> None:
    """Each custom kernel is in the code object of its placeholder under upstream's name, with upstream's
    descriptor bytes, code size and metadata entry (upstream assembled the same file with LLVM 19)."""
    upstream = shared_dir("reference", "upstream-lib", "gfx942")
    seen = set()
    for dat in sorted(custom_library.glob("TensileLibrary_*_gfx942.dat")):
        if "lazy" in dat.name:
            continue
        names = {s["kernelName"] for s in read_dat(dat)["solutions"]}
        assert all(n.startswith("Custom_") for n in names)
        ours, theirs = read_code_object(dat.with_suffix(".co")), read_code_object(upstream / f"{dat.stem}.co")
        assert set(ours.names()) == names and names <= set(theirs.names())
        for name in names:
            a, b = ours.kernel(name), theirs.kernel(name)
            assert a.has_symbol and b.has_symbol
            # every descriptor field but kernel_code_entry_byte_offset (bytes 16-23), which follows where the
            # linker put the code: upstream's code object holds the placeholder's other kernels too
            assert len(a.descriptor) == len(b.descriptor) == 64, name
            assert a.descriptor[:16] + a.descriptor[24:] == b.descriptor[:16] + b.descriptor[24:], name
            assert a.code_size == b.code_size, name
            assert a.metadata == b.metadata, name
        ref = {s["kernelName"]: s for s in read_dat(upstream / dat.name)["solutions"]}
        for sol in read_dat(dat)["solutions"]:  # the whole entries are compared in tests/library/test_reference.py
            assert sol["internalArgsSupport"] == ref[sol["kernelName"]]["internalArgsSupport"]
        seen |= names
    assert len(seen) == 5


def test_runtime_selects_and_launches_every_custom_kernel(custom_library: Path, tmp_path: Path) -> None:
    """hipBLASLt's runtime (../shared/tools/runtime-probe) loads the custom-only library, selects each custom
    kernel for the sizes of its tables and packs its arguments against the code object without a fault (the
    dev-set build's probe, tests/tcl/test_runtime_probe.py, compares the whole library with upstream's)."""
    probe = find_probe()
    run = run_probe(probe, "gfx942", custom_library, tmp_path / "probe")
    report = run.report()
    assert report is not None, run.log[-3000:]
    assert runtime_faults(report) == {}
    launched = {p["run"]["solution"]["kernelName"] for p in run.jsonl("ours.jsonl") if p.get("kind") == "problem"
                and isinstance(p.get("run"), dict) and "solution" in p["run"]}
    assert len(launched) == 5 and all(name.startswith("Custom_") for name in launched)


def test_verify_library_reports_custom_kernels_as_upstreams(custom_library: Path) -> None:
    """verify-library on the custom-only library: nothing fails. The one kernel in the universal argument layout
    (DTVA) runs, and the strict emulator stops it where it reads vcc as a carry-in right after a v_cmp wrote it
    (gfx940+ wants 2 wait states there): that is reported as a skip naming the kernel and the rule, because the
    kernel is hipBLASLt's own assembly built unchanged. The legacy-layout ones are skipped with their reason."""
    report = verify_library(custom_library.parent, arch="gfx942")
    assert len(report.outcomes) == 5 and all(o.kernel.startswith("Custom_") for o in report.outcomes)
    assert not [o for o in report.outcomes if o.status == "failed"]
    hazards = [o for o in report.outcomes if "wait-state rule" in o.reason]
    assert [o.kernel.endswith("_DTVA") for o in hazards] == [True]
    assert "HazardError" in hazards[0].reason and "hipBLASLt's own assembly" in hazards[0].reason
