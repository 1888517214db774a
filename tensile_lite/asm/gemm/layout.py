"""Where every long-lived value of a GEMM kernel lives: one register map per kernel, laid out once
from the plan with the assembly layer's allocator, before any instruction is written.

Because the map is complete up front, the register counts (and the resource check) are known
without generating the kernel. Stage temporaries come from fixed scratch ranges in the map; the
epilogue reuses the registers that only the main loop needs.
"""

from __future__ import annotations

import attrs

from tensile_lite.asm.gemm.plan import GemmPlan, OperandPlan
from tensile_lite.asm.kernel import ArgumentLayout
from tensile_lite.asm.operands import Reg
from tensile_lite.asm.registers import RegisterCounts, Registers


@attrs.frozen(slots=True)
class OperandRegs:
    """Per-operand registers: addresses for global reads, LDS writes and LDS reads, the thread's
    tile coordinates (for guarded loads), the loaded tile, and the double-buffered MFMA inputs."""

    global_offset: Reg    # byte offset of the thread's first element from the tile's SRD base
    lds_write: Reg        # LDS byte address of the thread's first element
    lds_read: Reg         # LDS byte address of the lane's first MFMA input
    coord_c: Reg          # thread's offset along the tile's contiguous dimension (elements)
    coord_o: Reg          # thread's offset along the other dimension (elements)
    tile: Reg             # the loaded tile: `regs_per_load` per load
    mfma: tuple[Reg, Reg]  # two buffers of `wave_tile` MFMA inputs
    srd: Reg              # buffer resource
    increment: Reg        # SRD advance per DepthU, bytes
    stride: Reg           # bytes between consecutive indices of the non-contiguous dimension
    free_bound: Reg       # free-dimension elements left from the tile origin (for guards)
    guard: Reg            # non-zero: this workgroup must use guarded loads for this operand
    # k_rows of 8- and 16-bit data: per MFMA buffer, the elements read before they are packed
    pack: tuple[Reg, Reg] | None = None


@attrs.frozen(slots=True)
class RegisterMap:
    # entry and arguments
    kernarg: Reg
    workgroup_id: Reg
    args: Reg                   # the kernarg segment, dword by dword
    arg_layout: ArgumentLayout = attrs.field(repr=False)
    # work distribution and loop control
    tile0: Reg                  # first row (M) of the workgroup's tile
    tile1: Reg                  # first column (N)
    batch: Reg                  # batch index (stmp[6] when only setup needs it: setup leaves it alone)
    iters: Reg                  # DepthU tiles to run (0 when alpha == 0 or K == 0)
    full_iters: Reg             # DepthU tiles without a K remainder
    counter: Reg                # index of the tile being loaded
    k_bound: Reg                # K elements left from the tile being loaded
    edge: Reg                   # non-zero: the output tile crosses M or N
    stagger_wrap: Reg           # the load that wraps back to tile 0 under StaggerU, 0 for none (stagger.py)
    stmp: Reg                   # scalar scratch (7)
    mask: Reg                   # a lane mask (SGPR pair) for guards
    srd_c: Reg
    srd_d: Reg
    a: OperandRegs
    b: OperandRegs
    # vector
    tid: Reg
    oob: Reg                    # holds OUT_OF_BOUNDS (a VOP2 select cannot take it as a literal with vcc)
    vtmp: Reg                   # vector scratch (8)
    epilogue: Reg               # epilogue working registers (aliases main-loop-only registers)
    acc: Reg                    # accumulators (AGPRs on CDNA, VGPRs on RDNA)
    counts: RegisterCounts
    preload: Reg | None = None  # s[2:2+n]: the preloaded kernarg dwords (PreloadKernArgs), else None
    # split-K (MultipleBufferSingleKernel) state, see splitk.py: GSU, the slice index, the tile's
    # counter offset, the slice's first DepthU block; else None
    split_k: tuple[Reg, Reg, Reg, Reg] | None = None
    # OutputAmaxD: the GEMM's index within a grouped launch (0 otherwise), for its amax counter
    gemm_index: Reg | None = None
    # UseE: E's buffer resource at the tile, and the soffset of a block column in E
    srd_e: Reg | None = None
    soff_e: Reg | None = None
    # double-buffered LDS (plan.lds_buffers 2): +/- the bytes between the copies, the step the LDS read
    # addresses take at the end of an iteration (the write addresses take the opposite one)
    lds_swap: Reg | None = None

    def arg(self, name: str) -> Reg:
        """The SGPR(s) holding kernel argument `name` (valid once the arguments are loaded)."""
        for p in self.arg_layout.arguments:
            if p.argument.name == name:
                return self.args[p.offset // 4:(p.offset + p.argument.size) // 4]
        raise KeyError(name)


def epilogue_registers(plan: GemmPlan) -> int:
    """Working VGPRs of the epilogue (see epilogue.Regs): four per-lane coordinates, the block's
    values and C values, then the row limit, two addresses, a temporary and a constant, then the
    epilogue features' own (epi/)."""
    # imported here: the features' steps use the emitting helpers, which read this module
    from tensile_lite.asm.gemm.epi.order import gemm_registers
    return 4 + 2 * plan.mfma.cd_regs + COMMON_EPILOGUE_REGISTERS + len(gemm_registers(plan.epilogue))


# the row limit, the addresses of C and D, a temporary and the bf16 NaN pattern (epilogue.Regs)
COMMON_EPILOGUE_REGISTERS = 5


def _operand(regs: Registers, op: OperandPlan) -> tuple[Reg, ...]:
    n = op.name
    return (regs.v.alloc(1, name=f"goff{n}"), regs.v.alloc(1, name=f"lw{n}"), regs.v.alloc(1, name=f"lr{n}"),
            regs.v.alloc(1, name=f"c{n}"), regs.v.alloc(1, name=f"o{n}"))


def build_register_map(plan: GemmPlan, kernel: str, layout: ArgumentLayout, *, preload: int = 0) -> RegisterMap:
    """Lay out every register of the kernel (`preload`: kernarg dwords the hardware places in
    s[2:2+preload], before the workgroup id); raises RegisterOverflow with the numbers if it does
    not fit the target."""
    regs = Registers(plan.arch, kernel)
    kernarg = regs.s.reserve(0, 2, "kernarg")
    preloaded = regs.s.reserve(2, preload, "kernarg_preload") if preload else None
    wgid = regs.s.reserve(2 + preload, 1, "wgid")
    args = regs.s.alloc(-(-layout.size // 4), align=4, name="args")
    if preloaded is not None:
        # the preloaded dwords are copied into `args` before anything else runs (preload.enter),
        # so their SGPRs serve as ordinary registers afterwards
        regs.s.free(preloaded)
    srds = {}
    for n in ("A", "B", "C", "D"):
        srds[n] = regs.s.alloc(4, align=4, name=f"srd{n}")
    scal = {k: regs.s.alloc(1, name=k) for k in (
        "tile0", "tile1", "iters", "full", "counter", "kbound", "edge", "wrap", "incA", "incB", "strideA",
        "strideB", "fbA", "fbB", "guardA", "guardB")}
    # scratch before the mask pair: wide SGPR tuples start at multiples of 4, pairs fill the gap
    stmp = regs.s.alloc(7, align=4, name="stmp")
    # the batch index outlives setup only when the epilogue reads a batched bias, writes batch 0's gradient
    # bias or counts amax groups,
    # or a split-K kernel places its tile in the workspace (splitk._workspace_resource)
    keep_batch = plan.epilogue.bias_read or plan.epilogue.bias_from_b or plan.epilogue.amax_d or bool(plan.split_k)
    batch = regs.s.alloc(1, name="batch") if keep_batch else stmp[6]
    gemm_index = regs.s.alloc(1, name="gemm") if plan.epilogue.amax_d else None
    srd_e = regs.s.alloc(4, align=4, name="srdE") if plan.epilogue.use_e else None
    soff_e = regs.s.alloc(1, name="soffE") if plan.epilogue.use_e else None
    mask = regs.s.alloc(2, align=2, name="mask")
    lds_swap = regs.s.alloc(1, name="ldsSwap") if plan.lds_buffers == 2 else None
    # four single SGPRs, so they can fill the holes alignment leaves
    split_k = None
    if plan.split_k:
        gsu, piece, counter, start = (regs.s.alloc(1, name=f"splitk{i}") for i in range(4))
        split_k = (gsu, piece, counter, start)

    tid = regs.v.reserve(0, 1, "tid")
    oob = regs.v.alloc(1, name="oob")
    vtmp = regs.v.alloc(8, align=2, name="vtmp")
    va = _operand(regs, plan.a)
    vb = _operand(regs, plan.b)
    # The main loop's data (loaded tiles, MFMA inputs) in one block that the epilogue reuses. Every
    # part starts even: 64-bit and wider register tuples must on gfx90a and later.
    sizes = [op.loads * op.regs_per_load for op in (plan.a, plan.b)]
    sizes += [2 * op.wave_tile * op.mfma_regs for op in (plan.a, plan.b)]
    sizes += [2 * op.pack_regs for op in (plan.a, plan.b)]
    starts, pos = [], 0
    for size in sizes:
        pos = -(-pos // 2) * 2
        starts.append(pos)
        pos += size
    block = regs.v.alloc(max(pos, epilogue_registers(plan)), align=2, name="loop")
    tile_a, tile_b, mfma_a, mfma_b = (block[start:start + size] for start, size in zip(starts[:4], sizes[:4],
                                                                                      strict=True))
    packs = tuple(None if not size else (block[start:start + size // 2], block[start + size // 2:start + size])
                  for start, size in zip(starts[4:], sizes[4:], strict=True))

    def halves(r: Reg, op: OperandPlan) -> tuple[Reg, Reg]:
        h = op.wave_tile * op.mfma_regs
        return r[0:h], r[h:2 * h]

    acc_count = plan.wave_tile[0] * plan.wave_tile[1] * plan.mfma.cd_regs
    # CDNA accumulates in AGPRs, RDNA's WMMA in VGPRs
    pool = regs.a if plan.lanes.has_agprs else regs.v
    assert pool is not None
    acc = pool.alloc(acc_count, align=4, name="acc")

    def operand_regs(n: str, v: tuple[Reg, ...], tile: Reg, mfma: Reg, op: OperandPlan,
                     pack: tuple[Reg, Reg] | None) -> OperandRegs:
        return OperandRegs(global_offset=v[0], lds_write=v[1], lds_read=v[2], coord_c=v[3], coord_o=v[4],
                           tile=tile, mfma=halves(mfma, op), srd=srds[n], increment=scal[f"inc{n}"],
                           stride=scal[f"stride{n}"], free_bound=scal[f"fb{n}"], guard=scal[f"guard{n}"],
                           pack=pack)

    return RegisterMap(
        kernarg=kernarg, workgroup_id=wgid, args=args, arg_layout=layout, tile0=scal["tile0"],
        tile1=scal["tile1"], batch=batch, iters=scal["iters"], full_iters=scal["full"],
        counter=scal["counter"], k_bound=scal["kbound"], edge=scal["edge"],
        stagger_wrap=scal["wrap"], stmp=stmp, mask=mask,
        srd_c=srds["C"], srd_d=srds["D"], a=operand_regs("A", va, tile_a, mfma_a, plan.a, packs[0]),
        b=operand_regs("B", vb, tile_b, mfma_b, plan.b, packs[1]), tid=tid, oob=oob, vtmp=vtmp,
        epilogue=block[0:epilogue_registers(plan)], acc=acc, counts=regs.counts(), preload=preloaded,
        split_k=split_k, gemm_index=gemm_index, srd_e=srd_e, soff_e=soff_e, lds_swap=lds_swap)
