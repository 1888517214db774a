"""A custom kernel's `custom.config`: the solution parameters its hand-written assembly was written for.

The block lives in the kernel's `.amdgpu_metadata` YAML document. Upstream takes every line between a line
that is exactly `---` and one that is exactly `...` as YAML and reads its `custom.config` key
(`getCustomKernelConfigAndAssembly` / `readCustomKernelConfig` in tensilelite/Tensile/CustomKernels.py,
hipBLASLt 7d9fb683; docs/custom_kernels.md), and requires `InternalSupportParams` with a `KernArgsVersion`
in it. The assembly itself is never changed: the whole file is what gets assembled.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from tensile_lite.model.params import Params

try:  # libyaml's loader, as for the logic files; the pure-Python one reads the same documents
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


class ConfigError(ValueError):
    """The file holds no usable custom.config; the message says why (the caller adds the solution)."""


@attrs.frozen(slots=True)
class KernelFile:
    """One custom kernel file as read: its config (canonical Params) and the SHA-256 of its bytes."""

    path: Path
    config: Params
    sha256: str


def metadata_yaml(text: str) -> str:
    """The lines between `---` and `...` (each exactly that), other lines blank so YAML errors keep the
    file's line numbers."""
    out, inside = [], False
    for line in text.splitlines():
        if line == "---":
            inside = True
            out.append("")
        elif line == "...":
            inside = False
            out.append("")
        else:
            out.append(line if inside else "")
    return "\n".join(out) + "\n"


def parse_config(text: str) -> Params:
    """The `custom.config` block of a custom kernel's text, checked as upstream checks it."""
    try:
        doc = yaml.load(metadata_yaml(text), Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"its metadata YAML cannot be read: {' '.join(str(exc).split())}") from None
    config = doc.get("custom.config") if isinstance(doc, Mapping) else None
    if not isinstance(config, Mapping):
        raise ConfigError("its metadata has no custom.config map")
    support = config.get("InternalSupportParams")
    if not isinstance(support, Mapping) or "KernArgsVersion" not in support:
        raise ConfigError("its custom.config has no InternalSupportParams with a KernArgsVersion")
    problem = config.get("ProblemType")
    if problem is not None and not isinstance(problem, Mapping):
        raise ConfigError("its custom.config ProblemType is not a map")
    return Params.from_mapping(config)


@functools.lru_cache(maxsize=64)
def _read(path: str, _mtime_ns: int, _size: int) -> KernelFile:
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"it is not UTF-8 text (byte {exc.start})") from None
    return KernelFile(Path(path), parse_config(text), hashlib.sha256(data).hexdigest())


def read_kernel_file(path: Path) -> KernelFile:
    """The file's config and digest; read once per build for all the solutions naming it (keyed by the
    file's identity on disk, so an edited file is read again)."""
    st = path.stat()
    return _read(str(path), st.st_mtime_ns, st.st_size)


def plain_config(kernel: KernelFile) -> dict[str, Any]:
    """The config as an ordinary dict of canonical values, for merging."""
    return dict(kernel.config.items())
