"""Check the target table against the toolchain actually found, once per toolchain, cached on disk.

Upstream probes every ISA with hundreds of serial assembler runs at every start (~50 s,
upstream_baseline.md). We assemble one tiny kernel per target, concurrently, and remember the answer
under a key that covers the toolchain's content (`Toolchain.fingerprint`), its version, this table
and the probe text, so a changed toolchain or table is never answered from a stale cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from tensile_lite.codeobj.assemble import assemble_argv, format_diagnostics, warnings_in
from tensile_lite.codeobj.toolchain import Toolchain, unsupported_message
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.errors import ToolchainError
from tensile_lite.targets import TARGETS, Target, bare_gfx, get_target

log = logging.getLogger(__name__)
# Bumped when the meaning of a cached entry changes.
_CACHE_FORMAT = 1


@attrs.frozen(slots=True)
class TargetProbe:
    gfx: str
    supported: bool
    warnings: tuple[str, ...] = ()
    detail: str = ""


@attrs.frozen(slots=True)
class ProbeReport:
    key: str
    toolchain: str
    targets: tuple[TargetProbe, ...]
    from_cache: bool = False

    def get(self, gfx: str) -> TargetProbe | None:
        for t in self.targets:
            if t.gfx == gfx:
                return t
        return None

    def supported(self) -> tuple[str, ...]:
        return tuple(t.gfx for t in self.targets if t.supported)

    def table_mismatches(self, version_major: int) -> tuple[str, ...]:
        """Targets where the table's LLVM range and the probe disagree (a table to fix, not an error)."""
        return tuple(t.gfx for t in self.targets
                     if t.supported != TARGETS[t.gfx].supported_by_llvm(version_major))


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "tensile-lite" / "toolchain-probe"


def probe_key(toolchain: Toolchain) -> str:
    h = hashlib.sha256()
    h.update(f"format {_CACHE_FORMAT}\n{toolchain.version}\n{toolchain.fingerprint()}\n".encode())
    for info in TARGETS.values():
        h.update(repr(attrs.astuple(info)).encode())
        h.update(TrivialKernel("probe", info.gfx).assembly_text().encode())
    return h.hexdigest()


def _run_probes(toolchain: Toolchain, targets: Iterable[Target]) -> tuple[TargetProbe, ...]:
    """Assemble the trivial kernel for every target at once: a dozen short processes, no queue needed."""
    results = []
    with tempfile.TemporaryDirectory(prefix="tensile-lite-probe-") as tmp:
        running = []
        for info in targets:
            text = TrivialKernel("probe", info.gfx).assembly_text()
            argv = assemble_argv(toolchain, info.gfx, Path(tmp) / f"{info.gfx}.o")
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
            except OSError as exc:
                raise ToolchainError(f"cannot run the assembler {toolchain.describe()}: {exc}") from exc
            running.append((info, text, proc))
        for info, text, proc in running:
            _, err = proc.communicate(text.encode())
            stderr = err.decode(errors="replace")
            made = (Path(tmp) / f"{info.gfx}.o").is_file()
            if proc.returncode == 0 and made:
                results.append(TargetProbe(info.gfx, True, tuple(warnings_in(stderr))))
            else:
                first = format_diagnostics(stderr, text, limit=1).strip().splitlines()
                detail = first[0].strip() if first else f"exit status {proc.returncode}"
                results.append(TargetProbe(info.gfx, False, (), detail))
    return tuple(results)


def _load(path: Path, key: str) -> ProbeReport | None:
    try:
        data = json.loads(path.read_text())
        if data.get("key") != key or data.get("format") != _CACHE_FORMAT:
            return None
        targets = tuple(TargetProbe(t["gfx"], bool(t["supported"]), tuple(t["warnings"]), t["detail"])
                        for t in data["targets"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if {t.gfx for t in targets} != set(TARGETS):
        return None
    return ProbeReport(key, data["toolchain"], targets, from_cache=True)


def _store(path: Path, report: ProbeReport) -> None:
    data = {"format": _CACHE_FORMAT, "key": report.key, "toolchain": report.toolchain,
            "targets": [attrs.asdict(t) for t in report.targets]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError as exc:
        # A read-only home must not stop a build; we only lose the cache.
        log.warning("cannot write the toolchain probe cache %s: %s", path, exc)


def probe_targets(toolchain: Toolchain, *, cache: Path | None = None, use_cache: bool = True) -> ProbeReport:
    """Which table targets this toolchain assembles, with any warnings it printed while doing so."""
    key = probe_key(toolchain)
    path = (cache or cache_dir()) / f"{key}.json"
    if use_cache:
        hit = _load(path, key)
        if hit is not None:
            _report_warnings(hit)
            return hit
    report = ProbeReport(key, toolchain.describe(), _run_probes(toolchain, TARGETS.values()))
    _report_warnings(report)
    if use_cache:
        _store(path, report)
    return report


def _report_warnings(report: ProbeReport) -> None:
    for t in report.targets:
        for w in t.warnings:
            log.warning("toolchain probe for %s printed a warning: %s", t.gfx, w)


def require_targets(toolchain: Toolchain, archs: Iterable[str], *, report: ProbeReport | None = None,
                    cache: Path | None = None) -> tuple[Target, ...]:
    """The table rows of `archs`, or a ToolchainError for the first the toolchain cannot assemble."""
    infos = tuple(get_target(a) for a in archs)
    for info in infos:
        toolchain.check_target(info.gfx)
    report = report or probe_targets(toolchain, cache=cache)
    for info in infos:
        probe = report.get(bare_gfx(info.gfx))
        if probe is None or not probe.supported:
            raise ToolchainError(unsupported_message(toolchain, info, probe.detail if probe else ""))
    return infos
