"""Assemble one kernel's text from stdin into an object, and link objects into a code object.

Both run the real LLVM tools with upstream's flags (tcl_anatomy.md §3.5, §3.7); no `.s` file is
ever written for assembling. Outputs appear atomically: a failed run never leaves a file at
`out_path` that looks complete.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT, run_tool
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import BuildError, DiskFull, ToolFailure
from tensile_lite.targets import bare_gfx, get_target

CODE_OBJECT_VERSIONS = (4, 5)
# Upstream slices at 10,000 objects (§3.7); a smaller slice keeps each argv well below ARG_MAX even
# with long kernel file names.
LINK_BATCH = 2000
_SHOWN_DIAGNOSTICS = 3
_DIAG = re.compile(r"^<stdin>:(\d+):(\d+): (error|warning|note): (.*)$")
_KERNEL = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)", re.MULTILINE)
_DISK_FULL = "No space left on device"


def _failure(stderr: str) -> type[ToolFailure]:
    """A full disk is reported as such (exit code of an output problem), any other failure as the tool's."""
    return DiskFull if _DISK_FULL in stderr else ToolFailure


def assemble_argv(
    toolchain: Toolchain, arch: str, out_path: Path, *, code_object_version: int = 4,
    wave64: bool | None = None,
) -> list[str]:
    """The assembler command line; `-` reads the text from stdin."""
    if code_object_version not in CODE_OBJECT_VERSIONS:
        raise BuildError(f"code object version {code_object_version} is not supported; use 4 or 5")
    info = get_target(arch)
    if wave64 is None:
        wave64 = info.wavefront_size == 64
    return [
        str(toolchain.assembler), "-x", "assembler", "-target", "amdgcn-amd-amdhsa",
        f"-mcode-object-version={code_object_version}", f"-mcpu={bare_gfx(arch)}",
        "-mwavefrontsize64" if wave64 else "-mno-wavefrontsize64",
        "-c", "-o", str(out_path), "-",
    ]


def run_assembler(toolchain: Toolchain, text: str, argv: Sequence[str], *,
                  timeout: float | None = DEFAULT_TOOL_TIMEOUT, tmp_dir: Path | None = None) -> str:
    """Run an assembler argv with `text` on stdin; return its stderr (warnings) or raise on failure."""
    proc = run_tool(argv, what="assembler", input_bytes=text.encode(), timeout=timeout,
                    tmp_dir=tmp_dir)
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise _failure(stderr)(f"assembler {proc.describe_exit()}\n" + format_diagnostics(stderr, text))
    return stderr


def format_diagnostics(stderr: str, text: str, *, limit: int = _SHOWN_DIAGNOSTICS) -> str:
    """The first `limit` errors, each with the offending source line, as an indented block.

    The source line is taken from the text we sent rather than from clang's echo so that it is shown
    even when clang truncates it; diagnostics without a location are passed through verbatim.
    """
    lines = text.splitlines()
    out: list[str] = []
    errors = 0
    loose: list[str] = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw)
        if not m:
            if raw.strip() and not raw.startswith(" ") and "^" not in raw and not out:
                loose.append(raw.strip())
            continue
        line_no, col, kind, msg = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        if kind != "error":
            continue
        errors += 1
        if errors > limit:
            continue
        src = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        out.append(f"  line {line_no}:{col}: error: {msg}")
        out.append(f"    | {src.rstrip()}")
        out.append("    | " + " " * max(col - 1, 0) + "^")
    if errors > limit:
        out.append(f"  ... and {errors - limit} more error(s)")
    if not out:
        out = [f"  {x}" for x in loose[:limit]] or ["  (no diagnostics printed)"]
    return "\n".join(out)


def warnings_in(stderr: str) -> list[str]:
    """The warning lines of an assembler run that otherwise succeeded."""
    found = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw)
        if m and m.group(3) == "warning":
            found.append(f"line {m.group(1)}: {m.group(4)}")
        elif "warning:" in raw and not m:
            found.append(raw.strip())
    return found


def assemble(
    toolchain: Toolchain, text: str, arch: str, out_path: Path, *, code_object_version: int = 4,
    wave64: bool | None = None, timeout: float | None = DEFAULT_TOOL_TIMEOUT,
) -> Path:
    """Assemble `text` for `arch` into the object `out_path` and return it.

    wave64 defaults to the target table's wavefront size (gfx9: 64, gfx10+: 32). On failure the
    BuildError carries the first diagnostics with their source lines, and no object is left behind.
    The tool's own temporaries go to the object's folder (ours to remove), never to the user's TMPDIR.
    """
    out_path = Path(out_path)
    argv = assemble_argv(toolchain, arch, out_path, code_object_version=code_object_version,
                         wave64=wave64)
    m = _KERNEL.search(text)
    what = f"kernel {m.group(1)}" if m else out_path.name
    try:
        run_assembler(toolchain, text, argv, timeout=timeout, tmp_dir=out_path.parent)
    except BuildError as exc:
        out_path.unlink(missing_ok=True)
        kind = type(exc) if isinstance(exc, ToolFailure) else ToolFailure
        raise kind(f"assembling {what} for {bare_gfx(arch)} failed "
                          f"({toolchain.describe()}): {exc.message}") from None
    if not out_path.is_file() or out_path.stat().st_size == 0:
        out_path.unlink(missing_ok=True)
        raise ToolFailure(f"assembling {what} for {bare_gfx(arch)}: the assembler reported success but wrote "
                          f"no object {out_path.name} ({toolchain.describe()})")
    return out_path


def _run_linker(toolchain: Toolchain, args: list[str], what: str, timeout: float | None,
                tmp_dir: Path) -> None:
    argv = [str(toolchain.linker), *args]
    proc = run_tool(argv, what=f"linking {what}", timeout=timeout, tmp_dir=tmp_dir)
    if proc.returncode != 0:
        stderr = proc.stderr.decode(errors="replace")
        msg = stderr.strip().splitlines()
        shown = "\n".join(f"  {x}" for x in msg[:_SHOWN_DIAGNOSTICS * 2]) or "  (no diagnostics printed)"
        kind = _failure(stderr)
        if proc.signal_name == "SIGBUS" and _full_for(tmp_dir, args):
            # ld.lld writes its output through a memory map: a disk that fills kills it with SIGBUS
            kind, shown = DiskFull, f"  {_DISK_FULL} in {tmp_dir} (the linker writes its output mapped in memory)"
        raise kind(f"linking {what} failed (ld.lld {proc.describe_exit()}, {toolchain.describe()}):\n{shown}")


def _full_for(folder: Path, args: Sequence[str]) -> bool:
    """The filesystem of `folder` has less room than the linker's inputs take (its output's size, about)."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    need = sum(Path(a).stat().st_size for a in args if not a.startswith("-") and Path(a).is_file())
    return st.f_bavail * st.f_frsize < need


def link(toolchain: Toolchain, objects: Sequence[Path], out_path: Path, *,
         batch: int = LINK_BATCH, timeout: float | None = DEFAULT_TOOL_TIMEOUT) -> Path:
    """Link `objects`, in the given order, into the shared code object `out_path`.

    Flags are those clang passes for `-target amdgcn-amd-amdhsa -Xlinker --build-id=sha1` (upstream's
    link). Above `batch` objects they are first combined with `ld.lld -r` in order-preserving slices,
    which gives the same final layout whatever the slice size. The result is written to
    `<out>.tmp-<pid>` and renamed into place.
    """
    out_path = Path(out_path)
    if not objects:
        raise BuildError(f"nothing to link into {out_path}")
    tmp_out = out_path.with_name(f"{out_path.name}.tmp-{os.getpid()}")
    parts_dir: Path | None = None
    try:
        inputs = [str(p) for p in objects]
        if len(inputs) > batch:
            parts_dir = Path(tempfile.mkdtemp(prefix=f".{out_path.stem}-parts-", dir=out_path.parent))
            parts = []
            for i in range(0, len(inputs), batch):
                part = parts_dir / f"part{i // batch:05d}.o"
                _run_linker(toolchain, ["-r", "-o", str(part), *inputs[i:i + batch]],
                            f"{out_path.name} (slice {i // batch})", timeout, out_path.parent)
                parts.append(str(part))
            inputs = parts
        _run_linker(toolchain, ["--no-undefined", "-shared", "--build-id=sha1", "-o", str(tmp_out),
                                *inputs], out_path.name, timeout, out_path.parent)
        if not tmp_out.is_file() or tmp_out.stat().st_size == 0:
            raise ToolFailure(f"linking {out_path.name}: the linker reported success but wrote nothing "
                              f"({toolchain.describe()})")
        os.replace(tmp_out, out_path)
    finally:
        tmp_out.unlink(missing_ok=True)
        if parts_dir is not None:
            shutil.rmtree(parts_dir, ignore_errors=True)
    return out_path
