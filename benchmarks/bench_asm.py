"""Issue 7 figure: lines of assembly per second for a 10,000-instruction kernel.

Measurements on a GEMM-like instruction mix (global loads, LDS writes and reads, MFMA or WMMA,
address arithmetic, waits, branches): generating the kernel through the checked builders and
streaming it into a writer (what a kernel writer pays, including its own Python), replaying only
the builder calls and the writer (the layer's own cost), streaming prebuilt instructions (the
writer alone), and the kernel's size. Best and median of several runs, in CPU time, since the
machine is shared.

`python -m benchmarks.bench_asm [--repeat N]` writes benchmarks/results/asm-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from benchmarks.machine import machine
from tensile_lite.asm import (
    DS,
    NULL_REG,
    Buf,
    Instruction,
    KernelArgument,
    KernelSpec,
    Label,
    Labels,
    Registers,
    get_arch,
    isa_for,
    kernel_header,
    kernel_trailer,
    sgpr,
    waitcnt,
)
from tensile_lite.asm.writer import AsmWriter

ROOT = Path(__file__).resolve().parents[1]
TARGET_INSTRUCTIONS = 10_000
ARCHS = ("gfx942", "gfx1100", "gfx1201")


Item = Instruction | Label | list[str]


def generate(arch: str) -> Iterator[Item]:
    """A GEMM-shaped kernel of about TARGET_INSTRUCTIONS instructions: header lines, then labels and
    instructions, then trailer lines (which need the register counts, known only at the end)."""
    isa = isa_for(arch)
    a = get_arch(arch)
    spec = KernelSpec(f"bench_{arch}", arch, [KernelArgument.value("n", "u32"), KernelArgument.pointer("A")],
                      256, lds_bytes=32768)
    regs = Registers(arch, spec.name)
    regs.s.reserve(0, 3)
    srd = regs.s.alloc(4)
    soff = 0 if a.mubuf_soffset_inline else NULL_REG
    counter = regs.s.alloc(1)
    addr = regs.v.alloc(8)
    data = regs.v.alloc(16)
    vals = regs.v.alloc(32)
    mi = a.find_matrix("f32", "f16", 16, 16, 16)
    acc = regs.a.alloc(64) if regs.a is not None else regs.v.alloc(64)
    mfma = isa.op(mi.name)
    wa, wc = mi.a_regs, mi.cd_regs
    vcc = a.vcc
    wait = {"vmcnt": 0} if "vmcnt" in a.wait_counters else {"loadcnt": 0}
    counter_name = next(iter(wait))
    labels = Labels()
    yield kernel_header(spec)
    n = i = 0
    while n < TARGET_INSTRUCTIONS:
        loop = labels.new("LoopBegin")
        yield loop
        k = i % 4
        block: list[Instruction] = [
            isa.buffer_load_dwordx4(data[4 * k:4 * k + 4], addr[k], srd, soff, mods=Buf(offen=True, offset=16 * k)),
            isa.v_add_u32(addr[k], 64, addr[k]),
            *waitcnt(isa, **{counter_name: k}),
            isa.ds_write_b128(addr[4 + k], data[4 * k:4 * k + 4], mods=DS(offset=256 * k)),
        ]
        for j in range(4):
            block.append(isa.ds_read_b64(vals[8 * j:8 * j + 2], addr[4 + j], mods=DS(offset=512 * j + 8 * k)))
        for j in range(4):
            src = vals[8 * j:8 * j + wa]
            c = acc[(wc * j) % 64:(wc * j) % 64 + wc]
            block.append(mfma(c, src, src, c))
        block += [
            isa.v_lshl_add_u32(addr[6], addr[7], 2, addr[5]),
            isa.v_cmp_gt_u32(vcc, addr[0], addr[1]),
            isa.v_cndmask_b32(addr[2], addr[2], addr[3], vcc),
            isa.s_add_u32(counter, counter, 1),
            isa.s_cmp_lt_u32(counter, sgpr(2)),
            isa.s_cbranch_scc1(loop),
        ]
        yield from block
        n += len(block)
        i += 1
    yield isa.s_endpgm()
    yield kernel_trailer(spec, regs.counts())


def stream(items: Iterable[Item], sink: object) -> int:
    with AsmWriter(sink) as w:
        for item in items:
            t = type(item)
            if t is Instruction:
                w.emit(item)  # type: ignore[arg-type]
            elif t is Label:
                w.label(item)  # type: ignore[arg-type]
            else:
                w.lines_of(item)  # type: ignore[arg-type]
        return w.lines


def _best(fn: Callable[[], int], repeat: int) -> dict:
    cpu, wall = [], []
    lines = 0
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        lines = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"lines": lines, "cpu_s_best": round(min(cpu), 5), "cpu_s_median": round(statistics.median(cpu), 5),
            "wall_s_best": round(min(wall), 5), "lines_per_cpu_s_best": round(lines / min(cpu)),
            "lines_per_cpu_s_median": round(lines / statistics.median(cpu))}


def replay(calls: list[tuple[Callable[..., Instruction], tuple, object]], sink: object) -> int:
    """Only the layer's work: every builder call of the kernel (checks and formatting) and the
    writer, with the caller's own work (register slicing, loop logic) already done."""
    with AsmWriter(sink) as w:
        emit = w.emit
        for build, operands, mods in calls:
            emit(build(*operands, mods=mods))
        return w.lines


def measure(arch: str, repeat: int) -> dict:
    sink = io.StringIO()
    stream(generate(arch), sink)  # also warms the per-process instruction tables
    text = sink.getvalue()
    items = list(generate(arch))
    calls = [(x.op.build, x.operands, x.mods) for x in items if type(x) is Instruction]
    return {
        "arch": arch,
        "instructions": sum(1 for x in items if type(x) is Instruction),
        "kernel_lines": text.count("\n"),
        "kernel_bytes": len(text.encode()),
        "comment_markers": sum(text.count(m) for m in ("//", "/*", ";")),
        "build_and_emit": _best(lambda: stream(generate(arch), io.StringIO()), repeat),
        "build_only_replayed": _best(lambda: replay(calls, io.StringIO()), repeat),
        "emit_prebuilt": _best(lambda: stream(items, io.StringIO()), repeat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--arch", action="append", choices=ARCHS)
    args = parser.parse_args(argv)
    results = [measure(a, args.repeat) for a in (args.arch or ARCHS)]
    result = {
        "scenario": "asm-emit", "date": datetime.date.today().isoformat(),
        "target_lines_per_s": 500_000, "instructions": TARGET_INSTRUCTIONS, "machine": machine(),
        "results": results,
    }
    out = ROOT / "benchmarks" / "results" / f"asm-{result['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    for r in results:
        b, c, e = r["build_and_emit"], r["build_only_replayed"], r["emit_prebuilt"]
        print(f"{r['arch']}: {r['kernel_lines']} lines, {r['kernel_bytes']} bytes; kernel generation + emit "
              f"{b['lines_per_cpu_s_best']:,} lines/CPU-s (median {b['lines_per_cpu_s_median']:,}); "
              f"builders + emit {c['lines_per_cpu_s_best']:,}; emit only {e['lines_per_cpu_s_best']:,}",
              file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
