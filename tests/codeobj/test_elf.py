from __future__ import annotations

import pytest

from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import check_kernels, missing_kernels, read_code_object
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.errors import BuildError


@pytest.fixture
def lib(toolchain, tmp_path):
    objs = [assemble(toolchain, TrivialKernel(n, "gfx90a", 5).assembly_text(), "gfx90a",
                     tmp_path / f"{n}.o", code_object_version=5) for n in ("alpha", "beta")]
    return link(toolchain, objs, tmp_path / "lib.co")


def test_reads_symbols_descriptors_and_metadata(lib):
    info = read_code_object(lib)
    assert info.names() == ("alpha", "beta")
    k = info.kernel("beta")
    assert k.metadata[".symbol"] == "beta.kd" and k.metadata[".wavefront_size"] == 64
    assert len(k.descriptor) == 64 and k.code_size == 4  # s_endpgm is one dword
    # In a linked object the descriptor's entry offset (bytes 16..23) points at the code.
    assert int.from_bytes(k.descriptor[16:24], "little", signed=True) != 0


def test_check_kernels_names_what_is_missing(lib):
    info = read_code_object(lib)
    check_kernels(info, ["alpha", "beta"])
    assert missing_kernels(info, ["alpha", "gamma"]) == {"gamma": "absent"}
    with pytest.raises(BuildError, match=r"lib\.co is missing 1 expected kernel\(s\): gamma: absent"):
        check_kernels(info, ["alpha", "gamma"])


def test_not_a_code_object(tmp_path):
    junk = tmp_path / "x.co"
    junk.write_bytes(b"not an elf file at all")
    with pytest.raises(BuildError, match="cannot read code object"):
        read_code_object(junk)
