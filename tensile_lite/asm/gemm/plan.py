"""The geometry of one GEMM kernel, decided once from a solution: types, matrix instruction, wave
layout, how threads read each operand tile from global memory, and where it lives in LDS.

Every stage of the writer reads this frozen record; nothing else decides geometry. Building it
raises `Unsupported` (a short feature name plus the details) for solutions the writer cannot build.

Element types: each operand has a memory format and an MFMA input format. They are the same except
for the mixed types (A f16 and B fp8, or the reverse, with DataType H), whose 8-bit operand is
converted to f16 after the global read, before the LDS write (upstream's ConvertAfterDS 0; the
conversion is exact, so where it happens cannot change results).

LDS holds a K-contiguous operand tile as one row of DepthU elements per free index (plus padding):
every MFMA lane reads consecutive k values of one row. An operand contiguous along the free dimension
is stored as loaded, one row of tile elements per k (`k_rows`: whole-vector LDS writes), and the lanes
read their k values one element at a time; narrower than a dword, the elements are packed into the
MFMA's registers after the reads (local_read.py). Where the packing registers do not fit, the narrow
operand is transposed while it is written instead (one element per write; `build_plan(pack_narrow=False)`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.errors import UnsupportedInstruction
from tensile_lite.asm.gemm.abi import must_split, solution_layout, splits_for_conversion, splits_in_kernel
from tensile_lite.asm.gemm.features import (
    EpilogueFeatures,
    VectorRegion,
    epilogue_features,
    staging_bytes,
    vector_regions,
)
from tensile_lite.asm.gemm.grouped import record_bytes, user_argument_offsets
from tensile_lite.asm.gemm.lanes import LaneLayout, lane_layout
from tensile_lite.asm.gemm.lds_pad import (
    MAX_PAD_BYTES,
    ROW_SHIFT_PAD_BYTES,
    Accesses,
    best_stride,
    layout_clocks,
)
from tensile_lite.asm.gemm.mac import (
    MAC,
    MacGeometryError,
    mac_instruction,
    mac_lanes,
    mac_types,
    mac_wave_group,
)
from tensile_lite.asm.isa import isa_for
from tensile_lite.asm.matrix import MatrixInstruction
from tensile_lite.model import DataType, Solution
from tensile_lite.model.elements import format_bytes
from tensile_lite.targets import get_target

# memory format -> MFMA input format the writer converts it to (after the global read; convert.py)
CONVERSIONS: frozenset[tuple[str, str]] = frozenset({("fp8", "f16"), ("bf8", "f16")})
SINGLE_KERNEL = "single_kernel"
MULTIPLE_BUFFER = "multiple_buffer"
# The conversion the xf32 emulation splits f32 inputs with (round to nearest even to bf16; gfx950)
SPLIT_CONVERSION = "v_cvt_pk_bf16_f32"
# The largest buffer_load / ds_write the writer uses, in bytes.
MAX_VECTOR_BYTES = 16
# LDS offsets of ds instructions are 16-bit immediates: a kernel addresses at most 64 KiB of LDS
# through one base register (gfx950's larger LDS is not used yet).
MAX_LDS_BYTES = 65536
# waves per SIMD the LDS padding must not cost (plan._build): past two, more waves hide little more
OCCUPANCY_WAVES = 2
# ... and how many more LDS clocks (bank conflicts) a layout that keeps them may cost
CONFLICT_TOLERANCE = 2.0


# (M, blocks) of the multi-block MFMAs laid out with their blocks along M (MatrixInstBM = blocks): lane l
# holds A row l and all K; D row 4 * (l / N) + the register's row (the single-block formula of lanes.py)
MULTI_BLOCK_ALONG_M: frozenset[tuple[int, int]] = frozenset({(4, 16), (16, 4)})


class Unsupported(Exception):
    """A solution the writer cannot build: `feature` ranks it in coverage, `detail` explains."""

    def __init__(self, feature: str, detail: str = "") -> None:
        self.feature = feature
        self.detail = detail or feature
        super().__init__(f"{feature}: {self.detail}" if detail else feature)


@attrs.frozen(slots=True)
class OperandPlan:
    """How one input operand (A or B) moves from global memory through LDS into MFMA registers."""

    name: str                # "A" or "B"
    bpe: int                 # bytes per element in global memory
    lds_bpe: int             # bytes per element in LDS and MFMA registers
    mem_format: str          # MFMA-style name of the element format in memory ("f16", "fp8", ...)
    mfma_format: str         # ... and of the MFMA input (differs when converted after the read)
    tile: int                # macro-tile size along this operand's free dimension
    depth_u: int
    k_contiguous: bool       # memory is contiguous along K (A transposed, B not transposed)
    vector: int              # elements per global load
    o_fastest: bool          # threads walk the non-contiguous dimension first (see _global_mapping)
    # per load of a thread: (offset along the contiguous dim, offset along the other dim), elements
    load_offsets: tuple[tuple[int, int], ...]
    lds_base: int            # byte offset of this operand's LDS region
    lds_stride: int          # elements per LDS row (a row is one free index, K contiguous)
    mi_size: int             # rows of one MFMA block along this operand's free dimension
    wave_tile: int           # MFMA blocks per wave along the free dimension
    wave_group: int          # waves along the free dimension
    k_per_lane: int          # consecutive k values in each run one lane feeds to one MFMA (lanes.py)
    mfma_regs: int           # VGPRs of one MFMA operand
    k_runs: int = 1          # runs of consecutive k per lane and MFMA (2 for gfx12's 16-bit WMMA)
    k_groups: int = 1        # lane groups along k (64 / M on CDNA, 1 on gfx11, 2 on gfx12)
    # MAC kernels' A: the lane's row in its block is lane / this (mac.py), not lane % mi_size
    lane_row_divisor: int = 0
    # stored as loaded: LDS rows run along the free dimension, one per k (see the module's docstring)
    k_rows: bool = False

    @property
    def loads(self) -> int:
        return len(self.load_offsets)

    @property
    def regs_per_load(self) -> int:
        """Registers of one load: the loaded vector, or its converted form when that is wider."""
        return max(1, self.vector * max(self.bpe, self.lds_bpe) // 4)

    @property
    def converted(self) -> bool:
        return self.mem_format != self.mfma_format

    @property
    def lds_rows(self) -> int:
        """LDS rows of the tile: one per free index, or one per k (k_rows)."""
        return self.depth_u if self.k_rows else self.tile

    @property
    def lds_row_base(self) -> int:
        """Elements of one LDS row before padding."""
        return self.tile if self.k_rows else self.depth_u

    @property
    def pack(self) -> int:
        """Elements the lane reads one by one into each MFMA input register (k_rows of 8- and 16-bit data)."""
        return max(1, 4 // self.lds_bpe) if self.k_rows else 1

    @property
    def pack_regs(self) -> int:
        """Registers that hold one buffer's elements until they are packed (all but each register's first)."""
        return self.wave_tile * self.mfma_regs * (self.pack - 1)

    @property
    def lds_bytes(self) -> int:
        return self.lds_rows * self.lds_stride * self.lds_bpe

    @property
    def write_bytes(self) -> int:
        """Bytes of each LDS write of a load that runs along an LDS row (K-contiguous or k_rows): the
        loaded vector, split into the widest pieces the row stride keeps aligned (padding may leave rows
        8- or 4-byte aligned only)."""
        row = self.lds_stride * self.lds_bpe
        return min(self.vector * self.lds_bpe, row & -row, MAX_VECTOR_BYTES)

    @property
    def contiguous_size(self) -> int:
        return self.depth_u if self.k_contiguous else self.tile

    @property
    def other_size(self) -> int:
        return self.tile if self.k_contiguous else self.depth_u


@attrs.frozen(slots=True)
class ArgumentPlan:
    """Where a grouped launch keeps this kernel's arguments (see grouped.py)."""

    num_sizes: int                  # leading size dwords (M, N[, batch], K) of a record or struct
    record_bytes: int               # one argType-1 record
    user_args_bytes: int            # one argType-2 struct
    # argType-2 loads: (first argument dword, struct byte offset, dwords), contiguous runs merged
    user_runs: tuple[tuple[int, int, int], ...]


def argument_plan(sol: Solution) -> ArgumentPlan:
    layout = solution_layout(sol)
    offsets, size = user_argument_offsets(sol)
    runs: list[list[int]] = []
    for placed in layout.arguments[4:]:
        first, dwords = placed.offset // 4, placed.argument.size // 4
        src = offsets.get(placed.argument.name)
        if src is None:
            continue  # the split-K arguments, which user-argument launches do not carry
        last = runs[-1] if runs else None
        if last and last[0] + last[2] == first and last[1] + 4 * last[2] == src:
            last[2] += dwords
        else:
            runs.append([first, src, dwords])
    return ArgumentPlan(num_sizes=sol.problem_type.num_indices_c + len(sol.problem_type.indices_summation),
                        record_bytes=record_bytes(sol), user_args_bytes=size,
                        user_runs=tuple((a, b, c) for a, b, c in runs))


@attrs.frozen(slots=True)
class GemmPlan:
    arch: Arch = attrs.field(repr=False)
    in_type: DataType            # the problem's DataType (the MFMA input type, or the 8-bit pair)
    dest_type: DataType          # C and D element type
    batched: bool                # the problem has a batch index (SizesFree2)
    use_beta: bool
    mfma: MatrixInstruction = attrs.field(repr=False)
    num_threads: int
    depth_u: int
    macro_tile: tuple[int, int]
    wave_group: tuple[int, int]
    wave_tile: tuple[int, int]
    a: OperandPlan
    b: OperandPlan
    lds_bytes: int
    epilogue: EpilogueFeatures
    vectors: tuple[VectorRegion, ...]   # epilogue vectors staged in LDS (after the main loop)
    args: ArgumentPlan
    lanes: LaneLayout = attrs.field(repr=False)
    e_type: DataType = DataType.S    # E's element type (UseE)
    # LocalSplitU: groups of waves that each sum 1/lsu of every DepthU over the whole tile (lsu.py)
    lsu: int = 1
    # split-K (splitk.py): "" (GSU 1), SINGLE_KERNEL (MultipleBufferSingleKernel: the kernel reduces) or
    # MULTIPLE_BUFFER (the runtime's conversion kernel reduces, postgsu.py)
    split_k: str = ""
    # xf32 emulated with bf16 MFMAs (UseF32XEmulation, xf32_split.py): A and B stay f32 in LDS
    xf32_split: bool = False
    # LDS copies of the A and B tiles the main loop alternates between (mainloop.py): 2 lets the next
    # tile be written while this one is read, with one barrier per iteration; 1 (1LDSBuffer, or where
    # two copies do not fit) writes after a barrier that ends the reads
    lds_buffers: int = 1
    # bytes from one copy to the next (the A and B tiles of one copy, 16-byte aligned)
    lds_buffer_bytes: int = 0
    # the solution's LocalWritePerMfma (LDS write groups per MFMA in the main loop; <= 0: spread evenly)
    local_write_per_mfma: float = -1.0
    # rows and columns of D one matrix instruction covers: M x N, or for a multi-block instruction its
    # blocks laid along M (MatrixInstBM) and N (MatrixInstBN); the unit of the wave tile
    block_m: int = 0
    block_n: int = 0

    @property
    def steps(self) -> int:
        """MFMA k-steps per DepthU of one wave (its LocalSplitU group's share)."""
        return self.depth_u // (self.mfma.k * self.lsu)

    @property
    def group_waves(self) -> int:
        """Waves of one LocalSplitU group: the waves that cover the macro tile once."""
        return self.wave_group[0] * self.wave_group[1]

    @property
    def lsu_bytes(self) -> int:
        """LDS the LocalSplitU reduction takes: every accumulator of every wave past the first group."""
        acc = self.wave_tile[0] * self.wave_tile[1] * self.mfma.cd_regs
        return (self.lsu - 1) * self.group_waves * self.lanes.wave * acc * 4

    @property
    def dest_bpe(self) -> int:
        return self.dest_type.num_bytes

    @property
    def e_bpe(self) -> int:
        """Bytes per element of E (UseE: DataTypeE, by default D's type)."""
        return self.e_type.num_bytes

    @property
    def integer(self) -> bool:
        """int32 accumulation and epilogue (int8 inputs, ComputeDataType I; integer.py)."""
        return self.mfma.acc_type == "i32"

    @property
    def waves(self) -> int:
        return self.num_threads // self.lanes.wave


def _float_or(value: object, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _pow2_at_most(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _global_mapping(name: str, k_contiguous: bool, tile: int, depth_u: int, bpe: int, wanted: int,
                    threads: int) -> tuple[int, bool, tuple[tuple[int, int], ...]]:
    """Vector width, thread order, and each load's (c, o) offsets from the thread's start.

    Vectors are numbered with the contiguous dimension fastest (coalesced: neighbouring threads
    read neighbouring vectors) or, when that cannot split the tile evenly, the other dimension
    fastest. Thread t's n-th load is vector t + n * threads. With `size` the vector count along
    the fastest dimension, threads % size == 0 or size % threads == 0 keeps every load at a
    constant offset from the thread's first one, so one address register serves all loads.
    `bpe` is the wider of an element's sizes in memory and in LDS (both bound the vector).
    """
    c_size, o_size = (depth_u, tile) if k_contiguous else (tile, depth_u)
    vw = _pow2_at_most(max(1, min(wanted if wanted > 0 else MAX_VECTOR_BYTES // bpe, MAX_VECTOR_BYTES // bpe)))
    while vw >= 1:
        if c_size % vw == 0:
            cv = c_size // vw
            total = cv * o_size
            if total % threads == 0:
                for o_fastest, size in ((False, cv), (True, o_size)):
                    if threads % size and size % threads:
                        continue
                    offsets = []
                    for n in range(total // threads):
                        q = n * threads
                        if o_fastest:
                            offsets.append(((q // o_size) * vw, q % o_size))
                        else:
                            offsets.append(((q % cv) * vw, q // cv))
                    return vw, o_fastest, tuple(offsets)
        vw //= 2
    raise Unsupported("tiling:global read", f"{name} tile {c_size}x{o_size} cannot be split evenly over "
                                            f"{threads} threads")


def _lds_stride(depth_u: int, pad: int, unit: int) -> int:
    """Elements per LDS row: DepthU plus padding, rounded so every row starts aligned for the widest
    LDS access to it (`unit` elements)."""
    stride = depth_u + max(pad, 0)
    return -(-stride // unit) * unit


def _read_unit(op: OperandPlan) -> int:
    """Elements a padded row stride is a multiple of: every MFMA input read stays aligned to its width,
    and rows stay dword aligned."""
    if op.k_rows:
        return max(1, 4 // op.lds_bpe)
    return max(op.k_per_lane, 4 // op.lds_bpe, 1)


def _lane_reads(op: OperandPlan, wave: int) -> list[tuple[list[tuple[int, int]], int]]:
    """One k-step's LDS reads of wave 0 as (per-lane (row, column), bytes), as local_read.read_step issues
    them."""
    origins = [(lane % op.mi_size, (lane // op.mi_size) * op.k_per_lane if op.k_groups > 1 else 0)
               for lane in range(wave)]
    if op.k_rows:
        return [([(k + c * op.k_groups * op.k_per_lane + el, row + t * op.mi_size) for row, k in origins],
                 min(op.lds_bpe, MAX_VECTOR_BYTES))
                for t in range(op.wave_tile) for c in range(op.k_runs) for el in range(op.k_per_lane)]
    run_bytes = op.k_per_lane * op.lds_bpe
    width = min(run_bytes, MAX_VECTOR_BYTES)
    return [([(row + t * op.mi_size, k + c * op.k_groups * op.k_per_lane + part * width // op.lds_bpe)
              for row, k in origins], width)
            for t in range(op.wave_tile) for c in range(op.k_runs) for part in range(run_bytes // width)]


def _accesses(op: OperandPlan, wave: int) -> tuple[Callable[[int], Accesses], Accesses, int]:
    """Wave 0's LDS writes of one tile (for a row stride: their widths depend on how it aligns rows), its
    reads of one k-step, and the k-steps per tile, from the lane coordinates the writer's setup gives
    each access."""
    starts = [_write_origin(op, t) for t in range(wave)]

    def writes(stride: int) -> list[tuple[list[tuple[int, int]], int]]:
        out: list[tuple[list[tuple[int, int]], int]] = []
        piece = attrs.evolve(op, lds_stride=stride).write_bytes // op.lds_bpe
        for cc, oc in op.load_offsets:
            if op.k_contiguous or op.k_rows:
                out += [([(o + oc, c + cc + p) for c, o in starts], piece * op.lds_bpe)
                        for p in range(0, op.vector, piece)]
            else:
                out += [([(c + cc + el, o + oc) for c, o in starts], op.lds_bpe) for el in range(op.vector)]
        return out
    steps = op.depth_u // (op.k_groups * op.k_per_lane * op.k_runs)  # k-steps of the MFMA per tile
    return writes, _lane_reads(op, wave), steps


def _padded_stride(op: OperandPlan, wave: int) -> int:
    """Row stride with the padding that spreads wave 0's LDS writes and first k-step's reads over the
    banks best (lds_pad.py)."""
    writes, reads, steps = _accesses(op, wave)
    return best_stride(op.lds_stride, _read_unit(op), op.lds_bpe, writes, reads,
                       max_pad_bytes=ROW_SHIFT_PAD_BYTES if op.k_rows else MAX_PAD_BYTES, read_weight=steps)


def _lds_clocks(op: OperandPlan, wave: int) -> int:
    """LDS clocks of one tile's writes and reads by wave 0 with the operand's row stride (lds_pad.py)."""
    writes, reads, steps = _accesses(op, wave)
    return layout_clocks(op.lds_stride, op.lds_bpe, writes(op.lds_stride), reads, steps)


def _write_origin(op: OperandPlan, tid: int) -> tuple[int, int]:
    """(contiguous, other) coordinates of thread `tid`'s first load (setup.thread_addresses)."""
    if op.o_fastest:
        return (tid // op.other_size) * op.vector, tid % op.other_size
    cv = op.contiguous_size // op.vector
    return (tid % cv) * op.vector, tid // cv


def _element_formats(sol: Solution, arch: Arch) -> tuple[tuple[DataType, str, str], ...]:
    """(memory type, memory format, MFMA format) of A and B, or Unsupported."""
    pt = sol.problem_type
    dt = pt.data_type
    label = f"dtype:{pt.a_type.letter}{pt.b_type.letter}" if pt.a_type is not pt.b_type else f"dtype:{dt.letter}"
    # an 8-bit float DataType is the MFMA's input format(s) itself: F8B8 names A fp8 and B bf8
    pair = dt.operand_types if dt.is_8bit_float else None
    if pair is not None:
        if pt.a_type is not dt or pt.b_type is not dt:
            raise Unsupported(f"{label}/{dt.letter}", "8-bit MFMA inputs converted from other types")
        mem = pair
    elif dt.info.matrix_input:
        mem = (pt.a_type, pt.b_type)
    else:
        raise Unsupported(f"dtype:{dt.letter}")
    out = []
    for t in mem:
        fmt = t.isa_format
        if fmt is None or not t.info.matrix_input:
            raise Unsupported(label, f"{t.letter} operands are not read")
        mfma_fmt = fmt if pair is not None else str(dt.isa_format)
        if fmt != mfma_fmt and (fmt, mfma_fmt) not in CONVERSIONS:
            raise Unsupported(label, f"no conversion of {fmt} operands to {mfma_fmt}")
        if "fp8" in (fmt, mfma_fmt) or "bf8" in (fmt, mfma_fmt):
            if arch.fp8_format is None:
                raise Unsupported(f"{label} on {arch.name}", f"{arch.name} has no 8-bit float instructions")
        out.append((t, fmt, mfma_fmt))
    return tuple(out)


def _mac_geometry(sol: Solution) -> tuple[Arch, MatrixInstruction, LaneLayout, tuple[int, int], tuple[int, int],
                                           tuple[tuple[DataType, str, str], ...]]:
    """A MAC kernel's (arch in the solution's wave size, k-step, lanes, wave group, wave tile,
    operand formats), or Unsupported."""
    pt = sol.problem_type
    wave = sol.wavefront_size
    try:
        arch = get_arch(sol.arch)
    except Exception as exc:  # an unknown target is a coverage fact, not a crash
        raise Unsupported(f"arch:{sol.arch}", str(exc)) from None
    try:
        arch = get_arch(sol.arch, wave)
    except Exception:
        raise Unsupported(f"wave{wave}", f"{sol.arch} does not run wave{wave}") from None
    fmt = pt.data_type.isa_format
    if (fmt not in mac_types() or pt.a_type is not pt.data_type or pt.b_type is not pt.data_type
            or pt.dest_type is not pt.data_type or pt.compute_type is not pt.data_type):
        raise Unsupported(f"non-MFMA kernel {pt.data_type.letter}", "MAC kernels compute f32 or f64 only")
    assert fmt is not None
    try:
        mi = mac_instruction(fmt, (sol.workgroup[0], sol.workgroup[1]), wave, sol.depth_u)
    except MacGeometryError as exc:
        raise Unsupported("tiling:MAC", str(exc)) from None
    group = mac_wave_group(mi, (sol.workgroup[0], sol.workgroup[1]))
    tile = sol.thread_tile
    if (group[0] * tile[0] * mi.m, group[1] * tile[1] * mi.n) != sol.macro_tile:
        raise Unsupported("tiling:MAC", f"MacroTile {sol.macro_tile} is not WorkGroup x ThreadTile")
    formats = tuple((t, fmt, fmt) for t in (pt.a_type, pt.b_type))
    return arch, mi, mac_lanes(wave), group, tile, formats


def build_plan(sol: Solution, *, pack_narrow: bool = True) -> GemmPlan:
    """The geometry of `sol`'s kernel, or `Unsupported` naming the first thing in the way.
    `pack_narrow` False transposes 8- and 16-bit M/N-contiguous operands while they are written to LDS
    instead of packing them after the reads (fewer registers, for kernels the packing does not fit)."""
    pt = sol.problem_type
    mi = sol.matrix_instruction
    if mi is None:
        return _build(sol, *_mac_geometry(sol), pack_narrow=pack_narrow)
    try:
        arch = get_arch(sol.arch)
    except Exception as exc:  # an unknown target is a coverage fact, not a crash
        raise Unsupported(f"arch:{sol.arch}", str(exc)) from None
    formats = _element_formats(sol, arch)
    # F32XdlMathOp X: f32 data multiplied by the xf32 MFMAs (inputs rounded to 10 mantissa bits), or
    # with UseF32XEmulation by three bf16 MFMAs on a hi/lo split of each input (xf32_split.py)
    xf32 = pt.data_type is DataType.S and pt.f32_xdl_math_op is DataType.X
    emulated = bool(sol.tuning("UseF32XEmulation"))
    if emulated:
        if not xf32:
            raise Unsupported("UseF32XEmulation without xf32", "only f32 data with F32XdlMathOp X is emulated")
        if not isa_for(arch.name).has(SPLIT_CONVERSION):
            raise Unsupported(f"UseF32XEmulation on {arch.name}", f"{arch.name} has no {SPLIT_CONVERSION}")
    a_in, b_in = ("bf16", "bf16") if emulated else ("xf32", "xf32") if xf32 else (formats[0][2], formats[1][2])
    try:
        if a_in == "i8" and not arch.has_agprs:
            # RDNA's integer WMMA takes signed or unsigned bytes (iu8; the kernel asks for signed)
            a_in = b_in = "iu8"
        mfma = arch.find_matrix("i32" if a_in in ("i8", "iu8") else "f32", a_in, mi.m, mi.n, mi.k, mi.b,
                                b_type=b_in)
    except UnsupportedInstruction as exc:
        feature = "F32XdlMathOp:X" if xf32 else f"MI:{mi.m}x{mi.n}x{mi.k}x{mi.b}"
        raise Unsupported(feature, exc.message) from None
    lanes = lane_layout(arch, mfma)
    if mfma.m * mfma.n * mfma.blocks // lanes.wave != mfma.cd_regs or lanes.wave % mfma.m:
        raise Unsupported(f"MI:{mi.m}x{mi.n}x{mi.k}x{mi.b}", "accumulator layout not handled")
    if sol.wavefront_size != lanes.wave:
        raise Unsupported(f"wave{sol.wavefront_size}", f"{mfma.name} runs in wave{lanes.wave} here")
    if mi.b > 1 and (mi.bn != 1 or mi.bm != mi.b or (mfma.m, mfma.blocks) not in MULTI_BLOCK_ALONG_M):
        # the lanes' A rows and D rows follow block after block down M (spec/matrix_instructions.md
        # §3.1/§3.2) for these forms, whose blocks are lane groups of one k run each
        raise Unsupported("MI multi-block along N" if mi.bn != 1 else "MI multi-block",
                          f"{mfma.name} with MIBlock {mi.bm}x{mi.bn}: only all {mfma.blocks} blocks of "
                          f"{lanes.wave // mfma.blocks} lanes along M are laid out")
    return _build(sol, arch, mfma, lanes, sol.mi_wave_group, sol.mi_wave_tile, formats, pack_narrow=pack_narrow,
                  blocks=(mi.bm, mi.bn))


def _build(sol: Solution, arch: Arch, mfma: MatrixInstruction, lanes: LaneLayout, wave_group: tuple[int, int],
           wave_tile: tuple[int, int], formats: tuple[tuple[DataType, str, str], ...], *,
           pack_narrow: bool = True, blocks: tuple[int, int] = (1, 1)) -> GemmPlan:
    """The plan from the instruction, lanes and wave tiling (of an MFMA/WMMA or of a MAC kernel)."""
    pt = sol.problem_type
    mac = mfma.kind == MAC
    emulated = not mac and bool(sol.tuning("UseF32XEmulation"))  # checked by build_plan
    threads = sol.num_threads
    depth_u = sol.depth_u
    if depth_u % mfma.k:
        raise Unsupported("tiling:DepthU", f"DepthU {depth_u} is not a multiple of the MFMA K {mfma.k}")
    lsu = sol.workgroup[2]
    if depth_u % (mfma.k * lsu):
        raise Unsupported("LocalSplitU", f"DepthU {depth_u} does not split into {lsu} groups of MFMA K {mfma.k}")
    k_per_lane = lanes.k_run(mfma)
    mt0, mt1 = sol.macro_tile
    operands = []
    lds_base = 0
    for (name, tile, tlu, grvw, mi_size, wt, wg), (mem_type, mem_fmt, mfma_fmt) in zip((
            ("A", mt0, pt.tlu_a, sol.global_read_vector_width_a, mfma.m * blocks[0], wave_tile[0], wave_group[0]),
            ("B", mt1, pt.tlu_b, sol.global_read_vector_width_b, mfma.n * blocks[1], wave_tile[1], wave_group[1])),
            formats, strict=True):
        k_contiguous = not tlu
        bpe = mem_type.num_bytes
        lds_bpe = bpe if mem_fmt == mfma_fmt else format_bytes(mfma_fmt)
        vw, o_fastest, offsets = _global_mapping(name, k_contiguous, tile, depth_u, max(bpe, lds_bpe), grvw,
                                                 threads)
        # stored as loaded; MAC kernels' A lanes walk rows by lane / n, which only K-contiguous rows serve
        k_rows = not k_contiguous and not (mac and name == "A") and (
            lds_bpe >= 4 or (pack_narrow and not emulated and not mac))
        unit = vw if k_rows else max(vw if k_contiguous else 1, k_per_lane)
        stride = _lds_stride(tile if k_rows else depth_u, 0, unit)
        op = OperandPlan(name=name, bpe=bpe, lds_bpe=lds_bpe, mem_format=mem_fmt, mfma_format=mfma_fmt,
                         tile=tile, depth_u=depth_u, k_contiguous=k_contiguous,
                         vector=vw, o_fastest=o_fastest, load_offsets=offsets, lds_base=lds_base,
                         lds_stride=stride, mi_size=mi_size, wave_tile=wt, wave_group=wg,
                         k_per_lane=k_per_lane,
                         # emulated xf32: the lane's f32 inputs, split in place into bf16 hi and lo halves
                         mfma_regs=(2 if emulated else 1) * (mfma.a_regs if name == "A" else mfma.b_regs),
                         k_runs=lanes.runs, k_groups=lanes.groups,
                         lane_row_divisor=mfma.n if mac and name == "A" else 0, k_rows=k_rows)
        op = attrs.evolve(op, lds_stride=_padded_stride(op, lanes.wave))
        operands.append(op)
        lds_base += -(-op.lds_bytes // 16) * 16
    a, b = operands
    limit = min(MAX_LDS_BYTES, arch.lds_bytes)
    units = [_read_unit(op) for op in (a, b)]

    def laid_out(pad_a: int, pad_b: int) -> tuple[OperandPlan, OperandPlan, int]:
        """A and B with these paddings (B after A), and the bytes of the two tiles."""
        pa = attrs.evolve(a, lds_stride=_lds_stride(a.lds_row_base, pad_a, units[0]))
        pb = attrs.evolve(b, lds_stride=_lds_stride(b.lds_row_base, pad_b, units[1]),
                          lds_base=-(-pa.lds_bytes // 16) * 16)
        return pa, pb, pb.lds_base + -(-pb.lds_bytes // 16) * 16

    def copies(tiles: int) -> int:
        # the MAC and emulated-xf32 loops (mainloop._unpipelined) use one copy
        return 1 if sol.one_lds_buffer or mac or emulated or 2 * tiles > limit else 2

    # imported here: the features' steps use the emitting helpers, which read this module
    from tensile_lite.asm.gemm.epi import order as epi
    feat = epilogue_features(pt)
    vectors = vector_regions(epi.lds_vectors(feat), (mt0, mt1), threads)
    # the vectors, and then the amax reduction (an f32 per thread, amax.py), reuse the tiles' LDS once
    # the main loop is done
    acc_regs = wave_tile[0] * wave_tile[1] * mfma.cd_regs
    lsu_bytes = (lsu - 1) * wave_group[0] * wave_group[1] * lanes.wave * acc_regs * 4
    after = max(staging_bytes(vectors), epi.lds_bytes(feat, threads), lsu_bytes)
    # Padding only spreads rows over LDS banks: it is halved, down to none, until the layout fits what
    # the target lets one kernel address. A layout with less padding that keeps the LDS copies of the
    # unpadded one and lets as many workgroups share a CU (up to OCCUPANCY_WAVES per SIMD) is taken
    # instead when its accesses cost at most CONFLICT_TOLERANCE times as many LDS clocks.
    pads = [(a.lds_stride - a.lds_row_base, b.lds_stride - b.lds_row_base)]
    while pads[-1] != (0, 0):
        pads.append((pads[-1][0] // 2, pads[-1][1] // 2))
    target = get_target(sol.arch)
    bare = laid_out(0, 0)[2]
    waves = max(1, threads // lanes.wave)
    resident = min(target.lds_per_cu // max(copies(bare) * bare, after, 1),
                   -(-OCCUPANCY_WAVES * target.simds // waves))
    fitting = [c for c in (laid_out(*pad) for pad in pads) if c[2] <= limit]
    dense = [c for c in fitting if copies(c[2]) == copies(bare)
             and target.lds_per_cu // max(copies(c[2]) * c[2], after) >= resident]
    a, b, lds_base = fitting[0] if fitting else laid_out(0, 0)
    if dense and dense[0] is not fitting[0]:
        def clocks(c: tuple[OperandPlan, OperandPlan, int]) -> int:
            return _lds_clocks(c[0], lanes.wave) + _lds_clocks(c[1], lanes.wave)
        if clocks(dense[0]) <= CONFLICT_TOLERANCE * clocks(fitting[0]):
            a, b, lds_base = dense[0]
    if lds_base > limit:
        raise Unsupported("resources:LDS", f"the A and B tiles need {lds_base} bytes of LDS; at most "
                                           f"{limit} are addressable")
    tiles_bytes = lds_base
    buffers = copies(tiles_bytes)
    if mfma.acc_type == "i32" and sol.runtime.global_split_u != 1 and not splits_for_conversion(sol):
        # MultipleBuffer stores the exact int32 partial sums for the conversion kernel (postgsu.py)
        raise Unsupported("GSU>1", "the in-kernel split-K reduction adds f32 partial sums")
    lds_bytes = max(buffers * tiles_bytes, after)
    if lds_bytes > limit:
        raise Unsupported("resources:LDS", f"the epilogue needs {lds_bytes} bytes of LDS; at most "
                                           f"{limit} are addressable")
    return GemmPlan(arch=arch, in_type=pt.data_type, dest_type=pt.dest_type, batched=pt.num_indices_c == 3,
                    use_beta=pt.use_beta, mfma=mfma, num_threads=threads, depth_u=depth_u,
                    macro_tile=(mt0, mt1), wave_group=wave_group, wave_tile=wave_tile,
                    a=a, b=b, lds_bytes=lds_bytes, epilogue=feat, vectors=vectors,
                    args=argument_plan(sol), lanes=lanes, e_type=pt.e_type, lsu=lsu,
                    split_k=SINGLE_KERNEL if splits_in_kernel(sol) else MULTIPLE_BUFFER if must_split(sol) else "",
                    xf32_split=emulated, lds_buffers=buffers, lds_buffer_bytes=tiles_bytes,
                    local_write_per_mfma=_float_or(sol.tuning("LocalWritePerMfma"), -1.0),
                    block_m=mfma.m * blocks[0], block_n=mfma.n * blocks[1])
