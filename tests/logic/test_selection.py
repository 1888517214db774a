"""Which logic files a build reads: --logic-filter as 7.x means it, --experimental, and the rule for
unreadable files (other architectures never parsed; every bad file of a requested one reported)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tensile_lite.logic.scan as scan_module
from tensile_lite.build import read_selected
from tensile_lite.errors import LogicError, TensileLiteError, UnknownArchitecture
from tensile_lite.logic import OtherArch, Read, Unreadable, find_logic_files, scan_logic
from tensile_lite.logic.discover import filter_regex
from tensile_lite.tcl_args import build_parser, to_request
from tests.shared import shared_dir

FREESIZE = "aquavanjaram/gfx942/FreeSize/aquavanjaram_Cijk_Ailk_Bljk_F8NH_HHS_BH_Bias_HAS_SAB_SAV_Freesize_NTA4_custom_GSU10.yaml"
GFX1201 = "gfx1201/Equality/gfx1201_Cijk_Alik_Bljk_F8F8S_BH_BiasS_HAS_SAV_UserArgs.yaml"
NAVI31 = "navi31/Equality/navi31_Cijk_Ailk_Bjlk_SB_Bias_HAS_SAV_UserArgs.yaml"


@pytest.fixture
def logic7(tmp_path: Path) -> Path:
    """A writable copy of ../shared/logic7 (layout kept: <root>/asm_full/...)."""
    root = tmp_path / "library"
    shutil.copytree(shared_dir("logic7", "asm_full"), root / "asm_full")
    return root


def _names(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


@pytest.mark.parametrize("pattern, path, selected", [
    ("*", "a/b/c.yaml", True),
    ("*HHS*", "aldebaran/x_HHS_BH.yaml", True),           # 2024: a glob on the file name
    ("*HHS*", "HHS/x.yaml", False),                       # ... never on a folder's name
    ("gfx942/FreeSize/*", "aq/gfx942/FreeSize/a.yaml", True),
    ("gfx942/FreeSize/*", "aq/gfx942/GridBased/a.yaml", False),
    ("gfx942/*", "aq/gfx942/FreeSize/a.yaml", False),      # `*` stays within one folder
    ("gfx942/**/*", "aq/gfx942/FreeSize/a.yaml", True),
    ("**/a.yaml", "x/y/a.yaml", True),                     # the validation step's form, taken as is
    ("a", "ba.yaml", False),
    ("[ab]x", "q/bx.yaml", True), ("[!ab]x", "q/bx.yaml", False),
])
def test_filter_is_a_glob_below_the_logic_root(pattern: str, path: str, selected: bool) -> None:
    assert bool(filter_regex(pattern).fullmatch(path)) is selected


def test_path_style_and_name_filters_on_7x_logic(logic7: Path) -> None:
    assert _names(find_logic_files([logic7], "gfx942/FreeSize/*")) == [Path(FREESIZE).name]
    assert _names(find_logic_files([logic7], "*F8NH*")) == [Path(FREESIZE).name]
    assert len(find_logic_files([logic7], "asm_full/gfx1250/**/*")) == 3
    assert len(find_logic_files([logic7])) == 9


def test_experimental_folders_of_any_case_need_the_flag(logic7: Path) -> None:
    for i, name in enumerate(("Experimental", "experimental", "EXPERIMENTAL")):
        folder = logic7 / "asm_full" / "gfx1201" / name
        folder.mkdir()
        shutil.copy(logic7 / "asm_full" / GFX1201, folder / f"e{i}.yaml")
    assert len(find_logic_files([logic7])) == 9
    assert len(find_logic_files([logic7], experimental=True)) == 12
    # the flag reaches the build's selection
    argv = ["--architecture=gfx1201", "--experimental", str(logic7), "out", "HIP"]
    assert len(read_selected(to_request(build_parser().parse_args(argv)), lambda level, msg: None)) == 4
    argv.remove("--experimental")
    assert len(read_selected(to_request(build_parser().parse_args(argv)), lambda level, msg: None)) == 1


def test_other_architectures_are_never_parsed(logic7: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = scan_module.read_logic_file
    monkeypatch.setattr(scan_module, "read_logic_file", lambda p, **kw: parsed.append(Path(p).name) or real(p, **kw))
    items = list(scan_logic([logic7], architectures=("gfx942",)))
    assert sorted(parsed) == sorted(Path(p.path).name for p in items if isinstance(p, Read))
    assert len(parsed) == 2 and all("aquavanjaram" in name for name in parsed)
    others = [i for i in items if isinstance(i, OtherArch)]
    assert len(others) == 7 and {"gfx1250", "gfx950", "gfx1201"} <= {o.arch for o in others}


def _break(path: Path) -> None:
    """Damage a file after its head, so its architecture can still be read."""
    text = path.read_text()
    path.write_text(text.replace("    WorkGroup: [", "    WorkGroup: many [", 1) if "    WorkGroup: [" in text
                    else text[: len(text) // 2] + "\n  - [unclosed\n")


def _request(logic: Path, archs: str):
    return to_request(build_parser().parse_args([f"--architecture={archs}", str(logic), "out", "HIP"]))


def test_a_broken_file_of_another_architecture_stops_nothing(logic7: Path) -> None:
    _break(logic7 / "asm_full" / GFX1201)
    assert len(read_selected(_request(logic7, "gfx942;"), lambda level, msg: None)) == 2


def test_every_broken_file_of_a_requested_architecture_is_reported(logic7: Path) -> None:
    _break(logic7 / "asm_full" / GFX1201)
    with pytest.raises(LogicError) as one:
        read_selected(_request(logic7, "gfx1201"), lambda level, msg: None)
    assert GFX1201.split("/")[-1] in one.value.one_line()
    _break(logic7 / "asm_full" / FREESIZE)
    lines: list[str] = []
    with pytest.raises(LogicError) as two:
        read_selected(_request(logic7, "gfx942;gfx1201"), lambda level, msg: lines.append(msg))
    assert "2 logic files" in two.value.one_line()
    reported = "\n".join(lines)
    assert Path(FREESIZE).name in reported and Path(GFX1201).name in reported and "WorkGroup" in reported


def test_unknown_architecture_in_a_file_matters_only_when_all_are_built(logic7: Path) -> None:
    # gfx1030 is not in the target registry: a gfx942 build never looks at such a file
    source = logic7 / "asm_full" / GFX1201
    for n in range(2):
        source.with_name(f"gfx1030_{n}.yaml").write_text(source.read_text().replace("gfx1201", "gfx1030"))
    assert len(read_selected(_request(logic7, "gfx942"), lambda level, msg: None)) == 2
    with pytest.raises(TensileLiteError) as info:
        read_selected(_request(logic7, "all"), lambda level, msg: None)
    assert "2 logic files" in info.value.one_line() and "gfx1030" in info.value.one_line()


def test_a_file_whose_head_names_no_architecture_is_read_in_full(logic7: Path) -> None:
    stray = logic7 / "asm_full" / "notes.yaml"
    stray.write_text("name: ci\njobs: [1, 2]\n")
    items = {i.path.name: i for i in scan_logic([logic7], architectures=("gfx942",))}
    assert isinstance(items["notes.yaml"], Unreadable) and items["notes.yaml"].arch is None


def test_scan_and_full_read_agree_on_the_architecture_of_every_7x_file(logic7: Path) -> None:
    for item in scan_logic([logic7], architectures=("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201")):
        if isinstance(item, Read):
            assert item.logic.arch in ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201")
        else:
            assert isinstance(item, OtherArch) and item.arch == "gfx1250"


def test_known_targets_names_the_file(logic7: Path) -> None:
    source = logic7 / "asm_full" / GFX1201
    source.with_name("gfx1030.yaml").write_text(source.read_text().replace("gfx1201", "gfx1030"))
    assert not [i for i in scan_logic([logic7], known_targets=True) if isinstance(i, Unreadable)
                and "gfx1030" not in str(i.path)]
    bad = [i for i in scan_logic([logic7], known_targets=True) if isinstance(i, Unreadable)]
    assert len(bad) == 1 and all(isinstance(i.error, UnknownArchitecture) for i in bad)
    assert all(str(i.path) in i.error.one_line() for i in bad)


def test_the_build_keeps_prediction_files_and_names_what_it_leaves_out(logic7: Path) -> None:
    origami = next((logic7 / "asm_full" / "gfx1250" / "Origami").glob("*.yaml"))
    text = origami.read_text()
    assert text.rstrip().endswith("- Prediction")
    (origami.parent / "embedding.yaml").write_text(text.replace("- Prediction", "- EmbeddingSimilarity"))
    lines: list[str] = []
    kept = read_selected(_request(logic7, "gfx1250"), lambda level, msg: lines.append(msg))
    assert {lf.library_type for lf in kept} >= {"Prediction"} and "EmbeddingSimilarity" not in {
        lf.library_type for lf in kept}
    assert any(lf.path == str(origami) and len(lf.solutions) == 5 for lf in kept)
    (warning,) = [m for m in lines if "left out" in m]
    assert "embedding.yaml" in warning and "EmbeddingSimilarity" in warning
