"""Issue 9 figures: GEMM kernel generation vs assembly cost, and our kernels' static quality beside
upstream's kernels for the same solutions (registers, LDS, code size, instruction mix, main loop).

`python -m benchmarks.bench_gemm` writes benchmarks/results/gemm-<date>.json. Needs ../shared (the dev
set and upstream's kernel metadata) and the LLVM toolchain.
"""

from __future__ import annotations

import collections
import datetime
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_model import ROOT, shared_logic
from tensile_lite.asm.gemm import generate, unsupported_reasons
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain_for
from tensile_lite.library.naming import kernel_name_for
from tensile_lite.logic import read_logic_file
from tensile_lite.model import kernel_key

_CLASSES = {"mfma": ("v_mfma", "v_smfmac"), "ds_read": ("ds_read", "ds_load"), "ds_write": ("ds_write", "ds_store"),
            "buffer_load": ("buffer_load",), "buffer_store": ("buffer_store",), "s_waitcnt": ("s_waitcnt", "s_wait_"),
            "s_barrier": ("s_barrier",), "branch": ("s_branch", "s_cbranch"), "v_accvgpr": ("v_accvgpr",),
            # ALU ops that pack sub-dword elements after guarded loads (CDNA may not rely on D16
            # loads keeping the other half), and the D16 loads RDNA packs with instead
            "pack_valu": ("v_lshl_or_b32", "v_perm_b32"), "d16_load": ("buffer_load_short_d16", "buffer_load_ubyte_d16",
                                                                     "buffer_load_d16")}
_INSN = re.compile(r"^\s+([a-z_0-9]+)\b.*//\s*([0-9A-F]+):", re.I)


def _upstream_kernels(shared: Path, arch: str) -> dict[tuple[str, int], dict[str, Any]]:
    """(logic file, position) -> upstream's kernel record for that solution."""
    ref = shared / "reference"
    kernels = {k["name"]: k for k in json.loads((ref / "kernels" / f"{arch}.json").read_text())}
    kernel_of_index = {}
    for dat in (ref / "dat" / arch).glob("*.json"):
        for s in json.loads(dat.read_text())["solutions"]:
            kernel_of_index[s["index"]] = s["kernelName"]
    out = {}
    for m in json.loads((ref / "match_table" / f"{arch}.json").read_text()):
        name = kernel_of_index.get(m["solution_index"])
        if name in kernels:
            out[(m["logic_file"], m["index_in_logic_file"])] = kernels[name]
    return out


def _disassembly(tc, co: Path) -> list[tuple[int, str]]:
    objdump = tc.tool("llvm-objdump")
    text = subprocess.run([str(objdump), "-d", str(co)], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = _INSN.match(line)
        if m:
            out.append((int(m.group(2), 16), m.group(1)))
    return out


def _main_loop(insns: list[tuple[int, str]], raw: str) -> list[tuple[int, str]]:
    """The instructions of the largest loop body (a backward branch), our proxy for one main-loop
    iteration (both its vector-load and its guarded-load paths).

    The target comes from the SOPP encoding (simm16 words after the next instruction): objdump names only
    one of several labels at an address, so names cannot be trusted."""
    best: list[tuple[int, str]] = []
    for m in re.finditer(r"^\s+s_(?:cbranch_\w+|branch)\s+\S+\s*//\s*([0-9A-F]+):\s*([0-9A-F]{8})", raw, re.M):
        src = int(m.group(1), 16)
        simm = int(m.group(2)[4:], 16)
        dst = src + 4 + 4 * (simm - 0x10000 if simm & 0x8000 else simm)
        body = [i for i in insns if dst <= i[0] <= src]
        if dst < src and len(body) > len(best):
            best = body
    return best


def _mix(insns: list[tuple[int, str]]) -> dict[str, int]:
    counts = collections.Counter()
    for _, mnem in insns:
        for cls, prefixes in _CLASSES.items():
            if mnem.startswith(prefixes):
                counts[cls] += 1
    return {cls: counts.get(cls, 0) for cls in _CLASSES}


def _per_arch(rows: list[dict[str, Any]], cls: str) -> dict[str, dict[str, float]]:
    """Per architecture: kernels, and the mean and max count of `cls` instructions in the main loop."""
    by_arch: dict[str, list[int]] = collections.defaultdict(list)
    for r in rows:
        by_arch[r["arch"]].append(r["ours"]["main_loop_mix"][cls])
    return {a: {"kernels": len(v), "mean": round(statistics.mean(v), 2), "max": max(v)} for a, v in sorted(by_arch.items())}


def measure(limit: int | None = None) -> dict[str, Any]:
    logic = shared_logic()
    if logic is None:
        return {"status": "skipped", "reason": "shared/logic not found"}
    shared = logic.parent
    rows = []
    seen: set[str] = set()
    upstream_cache: dict[str, dict] = {}
    toolchains: dict[str, Toolchain] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path in sorted(logic.rglob("*.yaml")):
            lf = read_logic_file(path)
            rel = path.relative_to(logic).as_posix()
            for pos, sol in enumerate(lf.solutions):
                key = kernel_key(sol)
                if key in seen or unsupported_reasons(sol):
                    continue
                seen.add(key)
                name = kernel_name_for(sol, key)
                t0 = time.process_time()
                text = generate(sol, name)
                gen = time.process_time() - t0
                # gfx940/941 assemble with an older LLVM than the default one
                if sol.arch not in toolchains:
                    toolchains[sol.arch] = find_toolchain_for(sol.arch)
                tc = toolchains[sol.arch]
                t0 = time.perf_counter()
                obj = assemble(tc, text, sol.arch, work / f"{len(rows)}.o")
                co = link(tc, [obj], work / f"{len(rows)}.co")
                asm_s = time.perf_counter() - t0
                info = next(k for k in read_code_object(co).kernels if k.name == name)
                raw = subprocess.run([str(tc.tool("llvm-objdump")), "-d", str(co)], capture_output=True,
                                     text=True, check=True).stdout
                insns = _disassembly(tc, co)
                loop = _main_loop(insns, raw)
                md = info.metadata
                ours = {"sgpr": md.get(".sgpr_count"), "vgpr": md.get(".vgpr_count"),
                        "agpr": (md.get(".agpr_count") or 0), "lds": md.get(".group_segment_fixed_size"),
                        "code_size": info.code_size, "instructions": len(insns), "mix": _mix(insns),
                        "main_loop_instructions": len(loop), "main_loop_mix": _mix(loop)}
                row = {"kernel": name, "arch": sol.arch, "file": rel, "position": pos,
                       "generate_cpu_s": round(gen, 4), "assemble_link_wall_s": round(asm_s, 4),
                       "co_bytes": co.stat().st_size, "text_bytes": len(text),
                       "text_lines": text.count("\n"), "ours": ours}
                if sol.arch not in upstream_cache:
                    upstream_cache[sol.arch] = _upstream_kernels(shared, sol.arch)
                up = upstream_cache[sol.arch].get((f"asm_full/{rel}" if not rel.startswith("asm_full") else rel, pos))
                if up:
                    up_vgpr_total = (up["kd_next_free_vgpr"] or 0)
                    row["upstream"] = {"kernel": up["name"], "sgpr": up["sgpr_count"], "vgpr": up["vgpr_count"],
                                       "vgpr_plus_agpr": up_vgpr_total, "lds": up["group_segment_fixed_size"],
                                       "code_size": up["code_size_bytes"], "instructions": up["instruction_count"],
                                       "mix": {c: up["instruction_classes"].get(c, 0) for c in _CLASSES
                                               if c in up["instruction_classes"]}}
                rows.append(row)
                if limit and len(rows) >= limit:
                    break
            if limit and len(rows) >= limit:
                break

    def ratios(field: str, ours_key: str | None = None) -> dict[str, float] | None:
        vals = [r["ours"][ours_key or field] / r["upstream"][field] for r in rows
                if "upstream" in r and r["upstream"].get(field)]
        if not vals:
            return None
        return {"median": round(statistics.median(vals), 3), "max": round(max(vals), 3), "n": len(vals)}

    regs = [(r["ours"]["vgpr"] + r["ours"]["agpr"]) / r["upstream"]["vgpr_plus_agpr"] for r in rows
            if "upstream" in r and r["upstream"]["vgpr_plus_agpr"]]
    loops = [r["ours"]["main_loop_instructions"] for r in rows]
    gen = [r["generate_cpu_s"] for r in rows]
    asm = [r["assemble_link_wall_s"] for r in rows]
    return {
        "status": "ok", "kernels": len(rows),
        "generate_cpu_s": {"median": statistics.median(gen), "max": max(gen), "total": round(sum(gen), 3)} if gen else None,
        "assemble_link_wall_s": {"median": statistics.median(asm), "max": max(asm), "total": round(sum(asm), 3)} if asm else None,
        "generated_lines_per_cpu_s": round(sum(r["text_lines"] for r in rows) / sum(gen)) if gen else None,
        "co_bytes_median": statistics.median(r["co_bytes"] for r in rows) if rows else None,
        "ratios_ours_over_upstream": {"sgpr": ratios("sgpr"), "lds": ratios("lds"), "code_size": ratios("code_size"),
                                      "instructions": ratios("instructions"),
                                      "vgpr_plus_agpr": {"median": round(statistics.median(regs), 3),
                                                         "max": round(max(regs), 3), "n": len(regs)} if regs else None},
        "main_loop_instructions": {"median": statistics.median(loops), "max": max(loops)} if loops else None,
        "main_loop_pack_valu": _per_arch(rows, "pack_valu"),
        "main_loop_d16_loads": _per_arch(rows, "d16_load"),
        "per_kernel": rows,
    }


def main() -> int:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else None
    result = measure(limit)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {"scenario": "gemm-kernels", "date": datetime.date.today().isoformat(), "commit": commit, **result}
    out = ROOT / "benchmarks" / "results" / f"gemm-{result['date']}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    summary = {k: v for k, v in result.items() if k != "per_kernel"}
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
