"""The library writer honours every fact of the interface record (interfaces.py): index numbering, the
mapping file, fnuz type names, the per-architecture layout, fallback names. Metadata only (no kernels):
the 7.x sample logic of gfx90a and gfx942 planned and written for each interface."""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from tensile_lite.commands import inspect_dat
from tensile_lite.errors import BuildError
from tensile_lite.interfaces import HIPBLASLT_2024, INTERFACES, ROCM_7_2, ROCM_DEVELOP, Interface
from tensile_lite.library import FORMATS, build_plan, read_dat, write_library
from tensile_lite.library.formats import DatError, decode, encode, file_name
from tensile_lite.library.layout import library_of, mapping_files, read_mapping
from tensile_lite.library.spelling import spelling_of
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile
from tensile_lite.model.datatypes import DataType
from tensile_lite.model.elements import ELEMENT_TYPES
from tests.shared import logic7_files

ARCHS = ("gfx90a", "gfx942")
FNUZ = ("Float8_fnuz", "BFloat8_fnuz", "Float8BFloat8_fnuz", "BFloat8Float8_fnuz")
OCP_NAMES_2024 = ("Float8", "BFloat8", "Float8BFloat8", "BFloat8Float8")  # what 11-14 were called in 2024


@pytest.fixture(scope="module")
def logic7() -> list[LogicFile]:
    return [lf for lf in (read_logic_file(p) for p in logic7_files()) if lf.arch in ARCHS]


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def _write(logic: list[LogicFile], interface: Interface, out: Path, fmt: str | None = None) -> Path:
    plan = build_plan(logic, archs=list(ARCHS), interface=interface)
    library = out / "library"
    write_library(plan, library, fmt or interface.default_library_format)
    return library


def _placeholders(library: Path) -> dict[str, Any]:
    """Every lazy library written below `library`, by name, decoded."""
    out = {}
    for path in sorted(library.rglob("TensileLibrary_*")):
        name = path.name.split(".")[0]
        if not name.startswith("TensileLibrary_lazy_"):
            out[name] = read_dat(path)
    return out


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_7x_indices_are_contiguous_per_library_in_7x_order(logic7, name):
    plan = build_plan(logic7, archs=list(ARCHS), interface=INTERFACES[name])
    order = [ph for ap in plan.archs for ph in ap.placeholders]  # architectures sorted, then names
    assert [ap.arch for ap in plan.archs] == sorted(ARCHS)
    assert all(list(ap.placeholders) == sorted(ap.placeholders, key=lambda p: p.name) for ap in plan.archs)
    indices = [s.index for ph in order for s in ph.solutions]
    assert indices == list(range(len(indices)))  # one run over the build, library after library
    for ph in order:  # inside a library: by source file, then position in it
        assert [(s.source, s.position) for s in ph.solutions] == sorted((s.source, s.position) for s in ph.solutions)


def test_2024_indices_still_start_at_zero_per_architecture(logic7):
    plan = build_plan(logic7, archs=list(ARCHS))
    assert [ap.placeholders[0].solutions[0].index for ap in plan.archs] == [0, 0]


@pytest.mark.parametrize("name", [ROCM_7_2, ROCM_DEVELOP])
def test_mapping_is_the_range_table_the_runtime_reads(logic7, tmp_path, name):
    """The runtime looks an index up with upper_bound then one step back: every solution of every lazy
    library written must come back to that library, and the `.dat` indices must be the plan's."""
    interface = INTERFACES[name]
    library = _write(logic7, interface, tmp_path)
    mappings = sorted(library.rglob("TensileLiteLibrary_lazy_*Mapping*"))
    assert len(mappings) == (1 if name == ROCM_7_2 else len(ARCHS))
    libs = _placeholders(library)
    checked = 0
    for path in mappings:
        mapping = read_mapping(read_dat(path))
        assert list(mapping) == sorted(mapping)
        gfx = path.parent.name if interface.per_arch_dirs else ""
        mine = {n: d for n, d in libs.items() if n.endswith(f"_{gfx}")} if gfx else libs
        assert set(mapping.values()) == set(mine)
        for lib_name, doc in mine.items():
            for sol in doc["solutions"]:
                assert library_of(mapping, sol["index"]) == lib_name
                checked += 1
    assert checked == sum(len(d["solutions"]) for d in libs.values()) > 0


def test_range_table_lookup_is_upper_bound_then_back():
    mapping = {0: "a", 5: "b", 9: "c"}
    assert [library_of(mapping, i) for i in (0, 4, 5, 8, 9, 100)] == ["a", "a", "b", "b", "c", "c"]
    assert library_of({3: "a"}, 2) is None


def test_layout_follows_the_record(logic7, tmp_path):
    flat = _write(logic7, INTERFACES[ROCM_7_2], tmp_path / "flat")
    assert all(p.is_file() for p in flat.iterdir())
    assert {p.name for p in flat.iterdir() if "Mapping" in p.name} == {"TensileLiteLibrary_lazy_Mapping.dat"}
    nested = _write(logic7, INTERFACES[ROCM_DEVELOP], tmp_path / "nested")
    assert sorted(p.name for p in nested.iterdir()) == sorted(ARCHS)
    for gfx in ARCHS:
        names = {p.name for p in (nested / gfx).iterdir()}
        # develop's default format: zlib streams under the logical `.dat` name plus `.zlib`
        assert all(n.endswith(".dat.zlib") for n in names)
        assert f"TensileLibrary_lazy_{gfx}.dat.zlib" in names
        assert f"TensileLiteLibrary_lazy_{gfx}_Mapping.dat.zlib" in names
        assert all(n.startswith("TensileLiteLibrary_") or n.split(".")[0].endswith(f"_{gfx}") for n in names)
    old = _write(logic7, INTERFACES[HIPBLASLT_2024], tmp_path / "old")
    assert not any("Mapping" in p.name for p in old.iterdir())


def test_zlib_files_are_level_9_zlib_streams_of_the_msgpack_bytes(logic7, tmp_path):
    library = _write(logic7, INTERFACES[ROCM_DEVELOP], tmp_path)
    path = library / "gfx942" / "TensileLiteLibrary_lazy_gfx942_Mapping.dat.zlib"
    data = path.read_bytes()
    assert data[:2] == b"\x78\xda"  # RFC 1950 header of level 9 (not gzip)
    assert zlib.decompress(data) == encode(read_dat(path), "msgpack")


def test_mapping_follows_the_library_format_except_yaml(logic7, tmp_path):
    for fmt in FORMATS:
        library = _write(logic7, INTERFACES[ROCM_7_2], tmp_path / fmt, fmt)
        want = file_name("TensileLiteLibrary_lazy_Mapping", "msgpack" if fmt == "yaml" else fmt)
        assert (library / want).is_file(), fmt


def test_fnuz_problem_types_are_spelled_as_7x_spells_them(logic7, tmp_path):
    new = _placeholders(_write(logic7, INTERFACES[ROCM_7_2], tmp_path / "new"))
    old = _placeholders(_write(logic7, INTERFACES[HIPBLASLT_2024], tmp_path / "old"))
    fp8_new = [n for n in new if "F8N" in n]
    assert fp8_new and len(fp8_new) == len([n for n in old if "F8" in n])
    for name in fp8_new:
        words = set(_strings(new[name]))
        assert words & set(FNUZ)
        assert not words & set(OCP_NAMES_2024), name  # 7.x reads those as the OCP types
        entry = new[name]["solutions"][0]
        types = next(p["value"] for p in entry["problemPredicate"]["value"] if p["type"] == "TypesEqual")
        assert set(types) <= set(FNUZ) | {"Half", "Float", "BFloat16"}
        assert entry["problemType"]["aType"] in FNUZ
    assert all(set(_strings(d)) & set(OCP_NAMES_2024) for n, d in old.items() if "F8" in n)
    # a problem type without 8-bit floats is spelled the same for both; 7.x's entries only add keys
    # (entry_schema.py, tested in test_entry_schema.py)
    (plain,) = [n for n in new if n.endswith("_gfx90a")]
    assert new[plain]["library"] == old[plain]["library"]
    for e7, e24 in zip(new[plain]["solutions"], old[plain]["solutions"], strict=True):
        assert e7["problemType"] == e24["problemType"]
        assert {k: e7["sizeMapping"][k] for k in e24["sizeMapping"]} == e24["sizeMapping"]
        assert e7["internalArgsSupport"].pop("useSFC") is False
        assert e7["internalArgsSupport"] == e24["internalArgsSupport"]


def test_every_type_the_writer_spells_has_a_7x_spelling():
    for t in ELEMENT_TYPES:
        assert t.name7 and t.letter7, t.code
    s7 = spelling_of(INTERFACES[ROCM_7_2])
    s24 = spelling_of(INTERFACES[HIPBLASLT_2024])
    assert [s7.name(DataType(c)) for c in (11, 12, 13, 14)] == list(FNUZ)
    assert [s7.token(DataType(c)) for c in (11, 12, 13, 14)] == ["F8N", "B8N", "F8B8N", "B8F8N"]
    assert all(s24.name(t) == t.cpp_name and s24.token(t) == t.letter for t in DataType)
    assert all(s7.name(t) == s24.name(t) for t in DataType if t.value < 11)


def test_fallback_names_follow_the_record(logic7):
    gfx942 = [lf for lf in logic7 if lf.arch == "gfx942"]
    fallback = attrs.evolve(gfx942[0], arch="fallback", path="fallback/fallback_F8NH.yaml")
    suffixed = build_plan([*gfx942, fallback], interface=INTERFACES[ROCM_DEVELOP]).arch("gfx942")
    assert next(p.name for p in suffixed.placeholders if p.is_fallback).endswith("_fallback_gfx942")
    bare = attrs.evolve(INTERFACES[ROCM_DEVELOP], fallback_per_arch=False)
    plain = build_plan([*gfx942, fallback], interface=bare).arch("gfx942")
    assert next(p.name for p in plain.placeholders if p.is_fallback).endswith("_fallback")
    # one bare name cannot hold two architectures' index ranges
    gfx90a = [lf for lf in logic7 if lf.arch == "gfx90a"]
    with pytest.raises(BuildError, match="fallback"):
        build_plan([*gfx942, *gfx90a, fallback], interface=bare)
    # and in a develop layout each architecture's mapping lists its own fallback library
    both = build_plan([*gfx942, *gfx90a, fallback], interface=INTERFACES[ROCM_DEVELOP])
    for (stem, mapping), ap in zip(mapping_files(both.interface, both.archs), both.archs, strict=True):
        assert any(n.endswith(f"_fallback_{ap.arch}") for n in mapping.values()), stem


def test_inspect_dat_reads_mapping_files(logic7, tmp_path, capsys):
    library = _write(logic7, INTERFACES[ROCM_DEVELOP], tmp_path)
    path = library / "gfx942" / "TensileLiteLibrary_lazy_gfx942_Mapping.dat.zlib"
    mapping = read_mapping(read_dat(path))
    assert inspect_dat.run(argparse.Namespace(file=str(path), json=False)) == 0
    out = capsys.readouterr().out
    assert f"msgpack-zlib, {path.stat().st_size:,} bytes, mapping of {len(mapping)} lazy libraries" in out
    first = next(iter(mapping))
    assert all(name in out for name in mapping.values()) and f"{first}.." in out
    bad = tmp_path / "bad_Mapping.dat"
    bad.write_bytes(encode({-1: "x"}))
    with pytest.raises(DatError, match="not a solution index"):
        inspect_dat.run(argparse.Namespace(file=str(bad), json=False))
    assert read_mapping(decode(encode({"7": "a", 2: "b"}))) == {2: "b", 7: "a"}  # string keys: the reader's stoi


@pytest.mark.parametrize("name", sorted(INTERFACES))
def test_every_interface_record_is_one_the_writer_can_serve(name):
    i = INTERFACES[name]
    assert i.default_library_format in FORMATS
    # a range table needs each library's indices in one range, unique over the files it covers
    assert i.contiguous_indices or not i.mapping_file
    if i.mapping_file:
        assert i.mapping_file.format(gfx="gfx942").startswith("TensileLiteLibrary_lazy_")
    # a mapping lists each architecture's libraries by their `_<gfx>` names: bare fallback names have none
    assert i.fallback_per_arch or not i.mapping_file


@pytest.mark.parametrize("name", sorted(INTERFACES))
def test_use_sfc_is_written_for_7x_only_and_true_only_where_the_kernel_reads_it(logic7, name):
    """7.x's runtime requires internalArgsSupport.useSFC (Serialization/ContractionSolution.hpp @01942615);
    the 2024 entries stay as they were. A file asking for the SFC grid gets it only if the kernel reads it."""
    from tensile_lite.library.documents import placeholder_document

    sol = logic7[0].solutions[0]
    asked = attrs.evolve(sol, params={**sol.params, "InternalSupportParams": {
        **(sol.params.get("InternalSupportParams") or {}), "UseSFC": True}})
    lf = attrs.evolve(logic7[0], solutions=(sol, asked, *logic7[0].solutions[2:]))
    ph = build_plan([lf], interface=INTERFACES[name]).archs[0].placeholders[0]

    def support(honoured: Any) -> list[Any]:
        return [e["internalArgsSupport"].get("useSFC") for e in placeholder_document(ph, honoured)["solutions"][:2]]

    if name == HIPBLASLT_2024:
        assert support(None) == [None, None]
        return
    assert support(None) == [False, True]  # metadata only: as the file says
    assert support(lambda s: {}) == [False, False]  # a kernel that does not read the SFC grid
    assert support(lambda s: {"useSFC": True}) == [False, True]
