"""Where a build finds the custom kernels' assembly files.

hipBLASLt keeps its hand-written kernels in its own source tree, `tensilelite/Tensile/CustomKernels/<name>.s`,
beside the logic files (which live further down the same tree), so the folder is an input of the build like
the logic files. It is chosen in this order:

1. `--custom-kernels-dir DIR` (build, coverage, inspect-logic, check-logic);
2. the environment variable `TENSILE_LITE_CUSTOM_KERNELS_DIR`;
3. the first `tensilelite/Tensile/CustomKernels` folder found walking up from the logic root, as a hipBLASLt
   source tree is laid out (the 2024 tree and rocm-libraries' `projects/hipblaslt` alike).

A folder given explicitly may be the CustomKernels folder itself or a root holding
`tensilelite/Tensile/CustomKernels` (a hipBLASLt checkout, or a copy in its layout). Nothing is searched
until a solution names a custom kernel, so builds without one never depend on the folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import attrs

from tensile_lite.errors import LogicError, Where

ENV = "TENSILE_LITE_CUSTOM_KERNELS_DIR"
FLAG = "--custom-kernels-dir"
# Below a hipBLASLt source root (upstream's CustomKernelDirectory is this folder of its package).
LAYOUT = ("tensilelite", "Tensile", "CustomKernels")
# A custom kernel's name becomes a file name: only symbol characters, so it cannot leave the folder.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@attrs.frozen(slots=True)
class Folder:
    """The folder custom kernels are read from (None: none found), how it was chosen, and the folders
    looked at on the way (named by the error when a kernel is missing)."""

    path: Path | None
    origin: str
    looked: tuple[Path, ...]

    def missing(self, name: str) -> str:
        """Where `name`.s was looked for, for the error."""
        if self.path is None:
            start = self.looked[0].parents[len(LAYOUT) - 1]
            return (f"no {'/'.join(LAYOUT)} folder in {start} or any folder above it, and none given with "
                    f"{FLAG} or ${ENV}")
        return f"not in {', '.join(str(p) for p in self.looked)} ({self.origin})"


def _given(path: Path, origin: str) -> Folder:
    nested = path.joinpath(*LAYOUT)
    chosen = nested if nested.is_dir() else path
    looked = (nested,) if chosen is nested else (path,)
    return Folder(chosen, origin, looked)


def find_folder(flag: str | Path | None, start: str | Path,
                environ: Mapping[str, str] | None = None) -> Folder:
    """The custom kernels folder for logic read from `start` (the logic root, or a file in it)."""
    env = os.environ if environ is None else environ
    if flag:
        return _given(Path(flag), FLAG)
    if env.get(ENV):
        return _given(Path(env[ENV]), f"${ENV}")
    begin = Path(start).resolve()
    if not begin.is_dir():
        begin = begin.parent
    for folder in (begin, *begin.parents):
        candidate = folder.joinpath(*LAYOUT)
        if candidate.is_dir():
            return Folder(candidate, f"found walking up from {begin}", (candidate,))
    return Folder(None, f"walking up from {begin}", (begin.joinpath(*LAYOUT),))


def kernel_file(folder: Folder, name: str, where: Where) -> Path:
    """`<folder>/<name>.s`, or one LogicError naming the solution (`where`) and where it was looked for."""
    at = attrs.evolve(where, parameter="CustomKernelName")
    if not _NAME.match(name):
        raise LogicError(f"custom kernel name {name!r} is not a kernel symbol", at)
    if folder.path is not None and (folder.path / f"{name}.s").is_file():
        return folder.path / f"{name}.s"
    raise LogicError(f"custom kernel {name}.s not found: {folder.missing(name)}", at)
