"""The one step between linking a library's code object and publishing it as `<name>.co`.

The 2024 library publishes the linked ELF as it is; ROCm 7.x hipBLASLt publishes it as a compressed offload
bundle unless `--no-compress` (interfaces.py `compress_code_objects`; spec rocm7_delta.md §3.4). The helper
code object `Kernels.so-000-<gfx>.hsaco` stays plain ELF in every generation: upstream unbundles it from one
HIP compile and moves it into place without compressing it (rocm-libraries
`projects/hipblaslt/tensilelite/Tensile/Toolchain/Source.py` `buildSourceCodeObjectFiles`, read at
@71a71b1e0d11d126c4fc5caee6c7f70beaf10267), so only the placeholder libraries go through here.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from tensile_lite.codeobj.bundler import OffloadBundler, compress, find_offload_bundler
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.interfaces import get_interface
from tensile_lite.workdirs import move_file


@attrs.frozen(slots=True)
class CodeObjectFinish:
    """How linked code objects are published: as they are (no bundler), or compressed with `bundler`."""

    bundler: OffloadBundler | None = None

    @property
    def compresses(self) -> bool:
        return self.bundler is not None

    def link_target(self, dest: Path, tmp_dir: Path) -> Path:
        """Where the linker writes the code object that will be published as `dest`: `dest` itself when
        nothing follows linking (so plain builds do exactly what they always did), else `<name>.co.raw` in
        our temporaries, as upstream's build_tmp has it."""
        return tmp_dir / f"{dest.name}.raw" if self.compresses else dest


def finish_code_object(raw: Path, dest: Path, arch: str, finish: CodeObjectFinish, *,
                       timeout: float | None = DEFAULT_TOOL_TIMEOUT) -> Path:
    """Publish the linked code object `raw` for `arch` as `dest`, compressed when `finish` says so. `raw`
    is gone afterwards (unless it is `dest`), whether this succeeded or not."""
    if finish.bundler is None:
        if raw != dest:
            move_file(raw, dest)
        return dest
    try:
        return compress(finish.bundler, raw, dest, arch, timeout=timeout)
    finally:
        raw.unlink(missing_ok=True)


def finish_for(compress_wanted: bool | None, interface: str, offload_bundler: str | None,
               toolchain: Toolchain | None) -> CodeObjectFinish:
    """The finish a build asked for: `compress_wanted` (None: the interface's default, False from
    `--no-compress`), with the bundler found and checked now, before anything is assembled."""
    wanted = get_interface(interface).compress_code_objects if compress_wanted is None else compress_wanted
    if not wanted:
        return CodeObjectFinish()
    return CodeObjectFinish(find_offload_bundler(offload_bundler, toolchain))
