"""Find clang-offload-bundler, prove it can compress, and compress one linked code object with it.

Search order (first hit wins), as for the assembler (toolchain.py): `--offload-bundler PATH`; next to the
assembler; ROCM_PATH/llvm/bin; /opt/rocm/llvm/bin; Debian's clang-offload-bundler-22, -19 on PATH. It is only
looked for when compression is wanted, and a bundler that cannot compress (built before LLVM 17, or without
zstd and zlib: TheRock issue 206) stops the build before any kernel is assembled.

The invocation is upstream's (rocm-libraries `projects/hipblaslt/tensilelite/Tensile/Toolchain/Component.py`
`Bundler.compress`, read at @0a95e50404abe9d00ca672fab98096b5a79fffe7): `--compress --type=o
--bundle-align=4096`, an empty host entry and the linked code object as the device entry. Two choices of ours:

- The device entry is named `hipv4-amdgcn-amd-amdhsa--<gfx>`. Upstream passes `…-amdhsa-unknown-<gfx>`
  (hipBLASLt PR 1658), which LLVM 21+ bundlers store as `…-amdhsa--<gfx>` anyway (same bytes, checked with
  LLVM 22), but LLVM 19's stores verbatim, an id the HIP runtime's `amdgcn-amd-amdhsa--` match does not take.
- The bundler's environment knobs that change its output without being asked for on the command line
  (OFFLOAD_BUNDLER_COMPRESS, OFFLOAD_BUNDLER_COMPRESSION_LEVEL, OFFLOAD_BUNDLER_VERBOSE) are removed from its
  environment, so a `.co` depends only on the bundler and the code object. COMPRESSED_BUNDLE_FORMAT_VERSION is
  kept: it is how an older runtime gets the v2 header from an LLVM 21+ bundler (llvm-project PR 152600).

Nothing else in a bundle varies: no time stamp, no path; the hash is the content's MD5 (bundle.py).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from tensile_lite.codeobj.bundle import COMPRESSED_BUNDLE, container
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT, run_tool
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import DiskFull, ToolchainError, ToolFailure
from tensile_lite.targets import bare_gfx

BUNDLER = "clang-offload-bundler"
BUNDLE_ALIGN = 4096
HOST_TARGET = "host-x86_64-unknown-linux-gnu"
# Knobs the bundler reads from its environment that would make the same input give other bytes.
IGNORED_ENV = ("OFFLOAD_BUNDLER_COMPRESS", "OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "OFFLOAD_BUNDLER_VERBOSE",
               "OFFLOAD_BUNDLER_IGNORE_ENV_VAR")
_PROBE_TIMEOUT = 60.0  # seconds; bundling a few bytes takes milliseconds unless something is wrong
_FIX = "pass --offload-bundler PATH to one that can (LLVM 17 or newer), or --no-compress for plain code objects"


@attrs.frozen(slots=True)
class OffloadBundler:
    path: Path
    found_by: str

    def describe(self) -> str:
        return f"{self.path} (found by {self.found_by})"


def device_target(gfx: str) -> str:
    """The bundle entry id of a code object for `gfx` (features dropped: our code objects are built for
    the "any" variant, as upstream's)."""
    return f"hipv4-amdgcn-amd-amdhsa--{bare_gfx(gfx)}"


def compress_argv(bundler: OffloadBundler, raw: Path, out: Path, gfx: str) -> list[str]:
    return [str(bundler.path), "--compress", "--type=o", f"--bundle-align={BUNDLE_ALIGN}",
            f"--targets={HOST_TARGET},{device_target(gfx)}", f"--input={os.devnull}", f"--input={raw}",
            f"--output={out}"]


def compress(bundler: OffloadBundler, raw: Path, dest: Path, gfx: str, *,
             timeout: float | None = DEFAULT_TOOL_TIMEOUT) -> Path:
    """Bundle and compress the code object `raw` into `dest`, which appears atomically (written as
    `<dest>.tmp-<pid>` and renamed); a failure leaves no `dest` and names the bundler and the file."""
    tmp = dest.with_name(f"{dest.name}.tmp-{os.getpid()}")
    try:
        proc = run_tool(compress_argv(bundler, raw, tmp, gfx), what=f"compressing {dest.name}", timeout=timeout,
                        tmp_dir=dest.parent, unset=IGNORED_ENV)
        if proc.returncode != 0:
            stderr = proc.stderr.decode(errors="replace")
            shown = "\n".join(f"  {x}" for x in stderr.strip().splitlines()[:6]) or "  (no diagnostics printed)"
            kind = DiskFull if "No space left on device" in stderr else ToolFailure
            raise kind(f"compressing {dest.name} failed ({BUNDLER} {proc.describe_exit()}, "
                       f"{bundler.describe()}):\n{shown}")
        with tmp.open("rb") as f:
            head = f.read(8)
        if container(head) != COMPRESSED_BUNDLE:
            raise ToolFailure(f"compressing {dest.name}: {bundler.describe()} reported success but wrote no "
                              f"compressed offload bundle")
        os.replace(tmp, dest)
    except FileNotFoundError:
        raise ToolFailure(f"compressing {dest.name}: {bundler.describe()} reported success but wrote "
                          "nothing") from None
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _candidates(explicit: str | None, toolchain: Toolchain | None,
                env: Mapping[str, str]) -> Iterator[tuple[Path, str]]:
    if explicit:
        yield Path(explicit), "--offload-bundler"
        return
    if toolchain is not None:
        beside = toolchain.tool(BUNDLER)
        if beside is not None:
            yield beside, f"next to {toolchain.assembler}"
    rocm = env.get("ROCM_PATH") or env.get("TENSILE_ROCM_PATH")
    if rocm:
        yield Path(rocm) / "llvm/bin" / BUNDLER, "ROCM_PATH"
    yield Path("/opt/rocm/llvm/bin") / BUNDLER, "/opt/rocm"
    for ver in ("22", "19"):
        hit = shutil.which(f"{BUNDLER}-{ver}")
        if hit:
            yield Path(hit), f"{BUNDLER}-{ver} on PATH"


def find_offload_bundler(explicit: str | None = None, toolchain: Toolchain | None = None,
                         env: Mapping[str, str] | None = None) -> OffloadBundler:
    """The first bundler in the documented order that exists, checked to compress; a ToolchainError in one
    line naming it (or what was tried) and the two ways out otherwise."""
    env = os.environ if env is None else env
    tried = []
    for path, how in _candidates(explicit, toolchain, env):
        if path.is_file() and os.access(path, os.X_OK):
            bundler = OffloadBundler(path, how)
            check_compresses(bundler)
            return bundler
        if how == "--offload-bundler":
            raise ToolchainError(f"{BUNDLER} {path} given by --offload-bundler does not exist or is not "
                                 "executable; pass a working one, or --no-compress for plain code objects")
        tried.append(f"{path} ({how})")
    raise ToolchainError(f"compressed code objects need {BUNDLER}, and none was found (tried "
                         f"{', '.join(tried)}); install one (apt-get install -y clang-22), {_FIX}")


def check_compresses(bundler: OffloadBundler) -> None:
    """Compress a few bytes the way a build does; a bundler without `--compress` or without a compression
    library fails here, with its own words, instead of after the kernels were assembled."""
    with tempfile.TemporaryDirectory(prefix="tensile-lite-bundler-") as tmp:
        raw, out = Path(tmp) / "probe.raw", Path(tmp) / "probe.co"
        raw.write_bytes(b"tensile-lite bundler probe\n" * 8)
        argv = compress_argv(bundler, raw, out, "gfx942")
        try:
            proc = run_tool(argv, what=f"checking {BUNDLER}", timeout=_PROBE_TIMEOUT, tmp_dir=tmp, unset=IGNORED_ENV)
        except ToolFailure as exc:
            raise ToolchainError(f"{BUNDLER} {bundler.describe()} cannot be run ({exc.message}); {_FIX}") from None
        made = out.is_file() and container(out.read_bytes()[:8]) == COMPRESSED_BUNDLE
        if proc.returncode != 0 or not made:
            said = _first_line(proc.stderr.decode(errors="replace")) or f"exit status {proc.returncode}"
            raise ToolchainError(f"{BUNDLER} {bundler.describe()} cannot compress code objects ({said}); {_FIX}")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if line:
            return line[:200]
    return ""
