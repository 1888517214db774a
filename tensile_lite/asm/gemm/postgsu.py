"""The runtime's split-K conversion kernels (GlobalSplitU > 1 with MultipleBuffer): after the GEMM
kernel has left GSU slices of D in the workspace (f32, or int32 for int32 compute; splitk.py), hipBLASLt launches one of these
by name from the helper code object, 256 threads per workgroup over M x N x batch elements, `vw`
consecutive elements along M per thread. Per element, in upstream's order (spec
epilogue_semantics.md §5.3, TL/KernelWriterConversion.py):

    acc = sum over g of W[g][m, n, b]        in slice order, from 0 (int32 slices for int32 compute)
    acc *= scaleA[m]; acc *= scaleB[n]       ScaleAB Vector (before alpha; a null vector is skipped)
    acc *= alpha                             alpha * scaleA * scaleB for ScaleAB Scalar (null = 1)
    acc *= scaleAlphaVec[f]                  a null vector is skipped
    beta' = beta * scaleC; if beta' != 0: acc += beta' * C[m, n, b]    (a multiply, then an add)
    acc += bias[b * strideBias + f]          a null bias is skipped
    E[m, n, b] = cvt_E(acc)                  UseE, when E is not null
    acc = act(acc); acc *= scaleD
    D[m, n, b] = cvt_D(acc)

With int32 compute (I8II: int8 inputs, int32 D) the slices hold the exact int32 partial sums and
everything is wrap-around 32-bit integer arithmetic (v_add_u32, v_mul_lo_u32): acc = alpha * sum,
plus beta * C when beta is not 0, stored as int32 (the GEMM kernel's integer epilogue, integer.py); no
epilogue feature is built for it.

`f` is m or n by the factor dimension (features.py: the same as the GEMM kernel's; upstream's
conversion kernel takes N for ScaleAlphaVec only when the bias is along N, which no shipped problem
type tells apart). The arguments are declared in the runtime's order (`outputConversionCallArgs`,
packed without padding); the names, the choice of vw and the packing are the host's
(`tensile_lite.host.conversion`), which hands each kernel its name. Every PostGSU bucket and vw variant
runs the same loop over the launch's GSU. A grouped problem type's kernels take (wiTablePtr,
DeviceUserArguments, argsPtr, gemm_count): GEMM i starts at work item wiTable[i] (a multiple of 256)
and its arguments are record i at argsPtr, each record the non-grouped arguments of that GEMM.
"""

from __future__ import annotations

from typing import cast

import attrs

from tensile_lite.asm.arch import Arch, get_arch
from tensile_lite.asm.arith import udiv_vector
from tensile_lite.asm.gemm.abi import declared_argument
from tensile_lite.asm.gemm.convert import BF16_NAN, bf16_round
from tensile_lite.asm.gemm.emit import Emitter, store_cache
from tensile_lite.asm.gemm.epi import order as epi
from tensile_lite.asm.gemm.epi.base import (
    AFTER_C,
    BEFORE_C,
    CONV_AFTER_STRIDES,
    CONV_LEAD,
    CONV_POINTERS,
    CONV_STRIDES,
    CONV_TAIL,
    CONV_VALUES,
    E_TYPE,
)
from tensile_lite.asm.gemm.features import DIM_M, DIM_N, DIM_RUNTIME, EpilogueFeatures, epilogue_features
from tensile_lite.asm.gemm.layout import RegisterMap
from tensile_lite.asm.gemm.plan import GemmPlan
from tensile_lite.asm.kernel import KernelArgument, KernelSpec, kernel_header, kernel_trailer, pack_arguments
from tensile_lite.asm.modifiers import Buf
from tensile_lite.asm.operands import Label, Reg, ttmp
from tensile_lite.asm.registers import Registers
from tensile_lite.model import DataType, ProblemType

THREADS = 256
# the compute types whose partial sums the conversion kernels reduce (f32, and exact int32)
COMPUTE_TYPES = (DataType.S, DataType.I)
_TYPES = (DataType.S, DataType.H, DataType.B)
_LOADS = {4: "buffer_load_dword", 8: "buffer_load_dwordx2", 16: "buffer_load_dwordx4"}


def supported(pt: ProblemType) -> bool:
    """Whether the conversion kernels of `pt` are built: f32 compute, f32/f16/bf16 D, E and bias,
    strided batches, f32 activations, no gradient or amax; or int32 compute to int32 D with no
    epilogue feature."""
    feat = epilogue_features(pt)
    if pt.compute_type is DataType.I:
        return (pt.dest_type is DataType.I and pt.strided_batched and not pt.gradient and not epi.active(feat)
                and pt.num_indices_c in (2, 3))
    return (pt.compute_type is DataType.S and pt.dest_type in _TYPES and pt.strided_batched
            and not pt.gradient and not pt.output_amax_d and (not pt.use_e or pt.e_type in _TYPES)
            and all(t in _TYPES for t in feat.bias_types)
            and (feat.activation == "none" or feat.activation_compute is DataType.S)
            and pt.num_indices_c in (2, 3))


@attrs.frozen(slots=True)
class Variant:
    """One conversion kernel: the problem type, what its name encodes, and the name the host gives it."""

    problem_type: ProblemType = attrs.field(eq=False, repr=False)
    bias_type: DataType | None
    gsu_bucket: int
    vw: int
    name: str


# ---- arguments ---------------------------------------------------------------------------------------

def arguments(pt: ProblemType) -> tuple[KernelArgument, ...]:
    """The per-GEMM arguments in the runtime's order (the whole argument list of a non-grouped kernel):
    the kernel's own, with each active epilogue feature's in its section, placed by its rank."""
    feat = epilogue_features(pt)
    dims = pt.num_indices_c
    dest = pt.dest_type.value_type
    # the partial sums and alpha/beta are of the compute type (the runtime packs alpha and beta so)
    compute = pt.compute_type.value_type
    roles = {E_TYPE: pt.e_type.value_type}
    sections: dict[int, list[KernelArgument]] = {}
    for f in epi.by_rank(epi.active(feat), "conversion_rank"):
        for section, declared in f.conversion_arguments(pt, feat).items():
            sections.setdefault(section, []).extend(declared_argument(a, roles) for a in declared)
    args = list(sections.get(CONV_LEAD, ()))
    args += [KernelArgument.pointer("D", dest), KernelArgument.pointer("WS", compute), KernelArgument.pointer("C", dest)]
    args += sections.get(CONV_POINTERS, ())
    args += [KernelArgument.value("alpha", compute), KernelArgument.value("beta", compute)]
    args += sections.get(CONV_VALUES, ())
    args += sections.get(CONV_STRIDES, ())
    args += [KernelArgument.value(f"{t}{i}", "u32") for t in ("strideD", "strideW", "strideC") for i in range(1, dims)]
    args += sections.get(CONV_AFTER_STRIDES, ())
    args += [KernelArgument.value(f"size_{i}", "u32") for i in range(dims)]
    args.append(KernelArgument.value("gsu", "u32"))
    args += sections.get(CONV_TAIL, ())
    return tuple(args)


GROUPED_ARGUMENTS = (KernelArgument.pointer("wiTablePtr", "u32"), KernelArgument.pointer("DeviceUserArguments"),
                     KernelArgument.pointer("argsPtr"), KernelArgument.value("gemm_count", "u32"))


# ---- the kernel ----------------------------------------------------------------------------------------

@attrs.frozen(slots=True)
class _Plan:
    """What the shared emitting helpers read of a plan: the target."""

    arch: Arch


class _Regs:
    def __init__(self, regs: Registers, spec_args: int, grouped: bool, vw: int) -> None:
        s, v = regs.s, regs.v
        self.kernarg = s.reserve(0, 2, "kernarg")
        self.wgid = s.reserve(2, 1, "wgid")
        self.args = s.alloc(spec_args, align=4, name="args")
        self.header = s.alloc(8, align=4, name="header") if grouped else None
        self.srd = {n: s.alloc(4, align=4, name=f"srd{n}") for n in ("WS", "D", "C", "X")}
        self.mask = s.alloc(2, align=2, name="mask")
        self.t = s.alloc(8, align=4, name="stmp")
        self.scal = {n: s.alloc(1, name=n) for n in ("total", "slice", "soff", "count", "alpha", "beta", "scaleD",
                                                     "k7fff", "fd")}
        self.tid = v.reserve(0, 1, "tid")
        self.vtmp = v.alloc(8, align=4, name="vtmp")
        self.v = {n: v.alloc(1, name=n) for n in ("id0", "m", "n", "b", "woff", "doff", "coff", "eoff", "nan", "f",
                                                  "x", "y")}
        self.acc = v.alloc(vw, align=vw, name="acc")
        self.val = v.alloc(vw, align=vw, name="val")


@attrs.frozen(slots=True)
class ConversionStep:
    """What an epilogue feature's conversion step reads: the writer (its registers and loaders), the
    features, the factor dimension (True: M, False: N, None: the run-time factorDim) and whether the
    problem is batched."""

    writer: _Writer
    feat: EpilogueFeatures
    along_m: bool | None
    batched: bool


class _Writer:
    def __init__(self, arch: Arch, variant: Variant, code_object_version: int) -> None:
        self.arch = arch
        self.variant = variant
        self.pt = variant.problem_type
        self.feat = epilogue_features(self.pt)
        along = {DIM_M: True, DIM_N: False, DIM_RUNTIME: None}[self.feat.factor_dim] if (
            self.feat.bias_read or self.feat.scale_alpha_vec) else True
        self.step = ConversionStep(self, self.feat, along, self.pt.num_indices_c == 3)
        self.grouped = self.pt.grouped_gemm
        self.record = pack_arguments(arguments(self.pt))
        top = GROUPED_ARGUMENTS if self.grouped else arguments(self.pt)
        self.spec = KernelSpec(name=variant.name, arch=arch, arguments=top, workgroup_size=THREADS,
                               workgroup_ids=(True, False, False), code_object_version=code_object_version)
        self.regs = Registers(arch, variant.name)
        self.r = _Regs(self.regs, -(-self.record.size // 4), self.grouped, variant.vw)
        self.lines = kernel_header(self.spec)
        # the shared helpers (activation, conversions, waits) read only the target of a plan
        self.e = Emitter(cast(GemmPlan, _Plan(arch)), cast(RegisterMap, None), self.lines)
        self.isa = self.e.isa
        # int32 compute: the slices and the epilogue are int32 (the problem type has no feature, supported)
        self.integer = self.pt.compute_type.is_integral

    # ---- helpers ---------------------------------------------------------------------------------
    def arg(self, name: str) -> Reg:
        for p in self.record.arguments:
            if p.argument.name == name:
                return self.r.args[p.offset // 4:(p.offset + p.argument.size) // 4]
        raise KeyError(name)

    def has(self, name: str) -> bool:
        return any(p.argument.name == name for p in self.record.arguments)

    def _load(self, first: Reg, count: int, base: Reg, offset: int) -> None:
        """first[0:count] = the dwords at base + offset, in as few scalar loads as alignment allows."""
        isa, e = self.isa, self.e
        pos = 0
        while pos < count:
            for width, name in ((8, "s_load_dwordx8"), (4, "s_load_dwordx4"), (2, "s_load_dwordx2"),
                                (1, "s_load_dword")):
                if width <= count - pos and (first.index + pos) % min(width, 4) == 0:
                    e(isa.op(name)(first[pos:pos + width], base, offset + 4 * pos))
                    pos += width
                    break

    def resource(self, srd: Reg, pointer: Reg) -> None:
        """A buffer over all of memory from `pointer`, or none at all (reads give 0) when it is null."""
        isa, e, t = self.isa, self.e, self.r.t
        e(isa.s_mov_b32(srd[0], pointer[0]), isa.s_mov_b32(srd[1], pointer[1]))
        e(isa.s_or_b32(t[7], pointer[0], pointer[1]), isa.s_cmp_eq_u32(t[7], 0))
        e(isa.s_cselect_b32(srd[2], 0, 0xFFFFFFFF), isa.s_mov_b32(srd[3], self.arch.srd_word3))

    def skip_if_null(self, pointer: Reg) -> Label:
        """A label to branch to when `pointer` is null (the branch is emitted)."""
        isa, e, t = self.isa, self.e, self.r.t
        skip = e.new_label("Null")
        e(isa.s_or_b32(t[7], pointer[0], pointer[1]), isa.s_cmp_eq_u32(t[7], 0), isa.s_cbranch_scc1(skip))
        return skip

    def scalar(self, dst: Reg, pointer: Reg) -> None:
        """dst = the f32 at pointer, 1.0 when null."""
        isa, e = self.isa, self.e
        skip = self.skip_if_null(pointer)
        e(isa.s_load_dword(dst, pointer, 0))
        e.wait(lgkmcnt=0)
        done = e.new_label("Loaded")
        e(isa.s_branch(done))
        e.label(skip)
        e(isa.s_mov_b32(dst, 1.0))
        e.label(done)

    def load_f32(self, dst: Reg, offset: Reg, srd: Reg, dt: DataType, imm: int = 0) -> None:
        """dst = element (dt) at byte offset + imm of srd, as f32."""
        isa, e = self.isa, self.e
        mods = Buf(offen=True, offset=imm)
        if dt is DataType.S:
            e(isa.buffer_load_dword(dst, offset, srd, e.soff0, mods=mods))
            e.wait(vmcnt=0)
        else:
            e(isa.buffer_load_ushort(dst, offset, srd, e.soff0, mods=mods))
            e.wait(vmcnt=0)
            e(isa.v_cvt_f32_f16(dst, dst) if dt is DataType.H else isa.v_lshlrev_b32(dst, 16, dst))

    def store(self, value: Reg, offset: Reg, srd: Reg, dt: DataType, imm: int) -> None:
        """Store f32 `value` as dt (RNE) at byte offset + imm; `value` is rounded in place."""
        isa, e, r = self.isa, self.e, self.r
        cache = store_cache(self.arch)
        mods = Buf(offen=True, offset=imm, cache=cache)
        if dt.num_bytes == 4:
            # f32, or int32 for integer compute
            e(isa.buffer_store_dword(value, offset, srd, e.soff0, mods=mods))
        elif dt is DataType.H:
            e(isa.v_cvt_f16_f32(value, value), isa.buffer_store_short(value, offset, srd, e.soff0, mods=mods))
        else:
            bf16_round(e, value, r.v["y"], r.scal["k7fff"], r.v["nan"])
            e(isa.buffer_store_short_d16_hi(value, offset, srd, e.soff0, mods=mods))

    # ---- stages ------------------------------------------------------------------------------------
    def load_arguments(self) -> None:
        isa, e, r = self.isa, self.e, self.r
        count = -(-self.record.size // 4)
        if not self.grouped:
            self._load(r.args, count, r.kernarg, 0)
            e.wait(lgkmcnt=0)
            return
        h, t = r.header, r.t
        assert h is not None
        self._load(h, 7, r.kernarg, 0)
        e.wait(lgkmcnt=0)
        table, args_ptr, gemms = h[0:2], h[4:6], h[6]
        # the last GEMM whose first work item is at or below this workgroup's
        wi, index, start, i, ptr, entry = t[0], t[1], t[2], t[3], t[4:6], t[6]
        e(isa.s_lshl_b32(wi, r.wgid, 8), isa.s_mov_b32(index, 0), isa.s_mov_b32(start, 0), isa.s_mov_b32(i, 0))
        scan, next_ = e.new_label("GemmScan"), e.new_label("GemmNext")
        done = e.new_label("GemmFound")
        e.label(scan)
        e(isa.s_cmp_lt_u32(i, gemms), isa.s_cbranch_scc0(done))
        e(isa.s_lshl_b32(ptr[0], i, 2), isa.s_add_u32(ptr[0], table[0], ptr[0]), isa.s_addc_u32(ptr[1], table[1], 0))
        e(isa.s_load_dword(entry, ptr, 0))
        e.wait(lgkmcnt=0)
        e(isa.s_cmp_le_u32(entry, wi), isa.s_cbranch_scc0(next_))
        e(isa.s_mov_b32(index, i), isa.s_mov_b32(start, entry))
        e.label(next_)
        e(isa.s_add_u32(i, i, 1), isa.s_branch(scan))
        e.label(done)
        e(isa.s_lshr_b32(start, start, 8), isa.s_sub_u32(r.wgid, r.wgid, start))
        e(isa.s_mul_i32(ptr[0], index, self.record.size))
        e(isa.s_add_u32(ptr[0], args_ptr[0], ptr[0]), isa.s_addc_u32(ptr[1], args_ptr[1], 0))
        self._load(r.args, count, ptr, 0)
        e.wait(lgkmcnt=0)

    def coordinates(self) -> None:
        """id0, and (m, n, b) of the thread's first element; lanes past the problem are masked off."""
        isa, e, r = self.isa, self.e, self.r
        v, t, vt = r.v, r.t, r.vtmp
        vw = self.variant.vw
        dims = self.pt.num_indices_c
        total = r.scal["total"]
        e(isa.s_mul_i32(total, self.arg("size_0"), self.arg("size_1")))
        if dims == 3:
            e(isa.s_mul_i32(total, total, self.arg("size_2")))
        e(isa.s_lshl_b32(t[0], r.wgid, 8))
        e(isa.v_add_u32(v["id0"], t[0], r.tid))
        e.v_mul_const(v["id0"], v["id0"], vw)
        vcc = self.arch.vcc
        mask = r.mask[0:self.arch.lane_mask_width]
        e(isa.v_cmp_gt_u32(vcc, total, v["id0"]))
        e(isa.s_and_saveexec_b64(mask, vcc) if len(mask) == 2 else isa.s_and_saveexec_b32(mask, vcc))
        end = e.new_label("NoElements")
        e(isa.s_cbranch_execnz(end), isa.s_endpgm())
        e.label(end)
        e(udiv_vector(isa, vt[0], v["m"], v["id0"], self.arg("size_0"), vt[2], vt[3]))
        if dims == 3:
            e(udiv_vector(isa, v["b"], v["n"], vt[0], self.arg("size_1"), vt[2], vt[3]))
        else:
            e(isa.v_mov_b32(v["n"], vt[0]), isa.v_mov_b32(v["b"], 0))

    def offset(self, dst: Reg, ld: Reg, batch: Reg | None, bpe: int) -> None:
        """dst = (m + n * ld + b * batch) * bpe."""
        isa, e, v = self.isa, self.e, self.r.v
        e(isa.v_mul_lo_u32(dst, v["n"], ld), isa.v_add_u32(dst, dst, v["m"]))
        if batch is not None:
            e(isa.v_mul_lo_u32(self.r.vtmp[0], v["b"], batch), isa.v_add_u32(dst, dst, self.r.vtmp[0]))
        e.v_mul_const(dst, dst, bpe)

    def accumulate(self) -> None:
        isa, e, r = self.isa, self.e, self.r
        vw = self.variant.vw
        s = r.scal
        ws = r.srd["WS"]
        self.resource(ws, self.arg("WS"))
        e(isa.s_lshl_b32(s["slice"], s["total"], 2))
        e(isa.v_lshlrev_b32(r.v["woff"], 2, r.v["id0"]))
        e(isa.v_mov_b32(r.acc[j], 0) for j in range(vw))
        e(isa.s_mov_b32(s["soff"], 0), isa.s_max_u32(s["count"], self.arg("gsu"), 1))
        loop = e.new_label("SliceLoop")
        e.label(loop)
        e(isa.op(_LOADS[4 * vw])(r.val, r.v["woff"], ws, s["soff"], mods=Buf(offen=True)))
        e.wait(vmcnt=0)
        add = isa.v_add_u32 if self.integer else isa.v_add_f32
        e(add(r.acc[j], r.acc[j], r.val[j]) for j in range(vw))
        e(isa.s_add_u32(s["soff"], s["soff"], s["slice"]), isa.s_sub_u32(s["count"], s["count"], 1))
        e(isa.s_cmp_lg_u32(s["count"], 0), isa.s_cbranch_scc1(loop))

    def scalars(self) -> None:
        """alpha, beta and scaleD (1.0), then the features' preparation (ScaleAB Scalar and ScaleCD
        fold their scales in)."""
        isa, e, r = self.isa, self.e, self.r
        s = r.scal
        e(isa.s_mov_b32(s["alpha"], self.arg("alpha")), isa.s_mov_b32(s["beta"], self.arg("beta")))
        e(isa.s_mov_b32(s["scaleD"], 1.0))
        for f in epi.active(self.feat):
            f.conversion_prepare(self.step)
        if DataType.B in (self.pt.dest_type, self.pt.e_type if self.feat.use_e else None):
            e(isa.s_movk_i32(s["k7fff"], 0x7FFF), isa.v_mov_b32(r.v["nan"], BF16_NAN))

    def vector_multiply(self, name: str, along_m: bool | None) -> None:
        """acc[j] *= vector[f_j] (f32), skipped when the vector is null; along_m None: factorDim."""
        isa, e, r = self.isa, self.e, self.r
        srd = r.srd["X"]
        pointer = self.arg(name)
        skip = self.skip_if_null(pointer)
        self.resource(srd, pointer)
        for j in range(self.variant.vw):
            self.factor_offset(j, along_m, 4)
            self.load_f32(r.v["x"], r.v["f"], srd, DataType.S)
            e(isa.v_mul_f32(r.acc[j], r.acc[j], r.v["x"]))
        e.label(skip)

    def factor_offset(self, j: int, along_m: bool | None, bpe: int, batch_stride: Reg | None = None) -> None:
        """v.f = byte offset of element j's factor (m + j or n, plus b * batch_stride) in a vector."""
        isa, e, r = self.isa, self.e, self.r
        v, vcc = r.v, self.arch.vcc
        f = v["f"]
        if along_m is None:
            e(isa.v_add_u32(f, j, v["m"]) if j else isa.v_mov_b32(f, v["m"]))
            e(isa.s_cmp_eq_u32(self.arg("factorDim"), 0))
            cselect = isa.s_cselect_b64 if self.arch.lane_mask_width == 2 else isa.s_cselect_b32
            e(cselect(vcc, -1, 0), isa.v_cndmask_b32(f, v["n"], f, vcc))
        elif along_m:
            e(isa.v_add_u32(f, j, v["m"]) if j else isa.v_mov_b32(f, v["m"]))
        else:
            e(isa.v_mov_b32(f, v["n"]))
        if batch_stride is not None:
            e(isa.v_mul_lo_u32(r.vtmp[0], v["b"], batch_stride), isa.v_add_u32(f, f, r.vtmp[0]))
        e.v_mul_const(f, f, bpe)

    def integer_epilogue(self) -> None:
        """D = alpha * acc + beta * C in wrap-around int32 arithmetic (C read only when beta is not 0)."""
        isa, e, r = self.isa, self.e, self.r
        vw = self.variant.vw
        s, v = r.scal, r.v
        batched = self.step.batched
        e(isa.v_mul_lo_u32(r.acc[j], s["alpha"], r.acc[j]) for j in range(vw))
        no_c = e.new_label("NoC")
        e(isa.s_cmp_eq_u32(s["beta"], 0), isa.s_cbranch_scc1(no_c))
        c = r.srd["C"]
        self.resource(c, self.arg("C"))
        self.offset(v["coff"], self.arg("strideC1"), self.arg("strideC2") if batched else None, 4)
        for j in range(vw):
            e(isa.buffer_load_dword(v["x"], v["coff"], c, e.soff0, mods=Buf(offen=True, offset=4 * j)))
            e.wait(vmcnt=0)
            e(isa.v_mul_lo_u32(v["x"], s["beta"], v["x"]), isa.v_add_u32(r.acc[j], r.acc[j], v["x"]))
        e.label(no_c)
        self.store_d()

    def store_d(self) -> None:
        """D = acc at D's strides, then the end."""
        isa, e, r = self.isa, self.e, self.r
        pt, v = self.pt, r.v
        d = r.srd["D"]
        self.resource(d, self.arg("D"))
        self.offset(v["doff"], self.arg("strideD1"), self.arg("strideD2") if self.step.batched else None,
                    pt.dest_type.num_bytes)
        for j in range(self.variant.vw):
            self.store(r.acc[j], v["doff"], d, pt.dest_type, j * pt.dest_type.num_bytes)
        e(isa.s_endpgm())

    def epilogue(self) -> None:
        """alpha, beta' * C and the epilogue features' steps, in the GEMM epilogue's order (epi/)."""
        if self.integer:
            self.integer_epilogue()
            return
        isa, e, r = self.isa, self.e, self.r
        feat, pt = self.feat, self.pt
        vw = self.variant.vw
        s, v = r.scal, r.v
        step = self.step
        before = epi.steps(feat, BEFORE_C)
        for f in before:
            if f.before_alpha:
                f.conversion_step(step)
        e(isa.v_mul_f32(r.acc[j], s["alpha"], r.acc[j]) for j in range(vw))
        for f in before:
            if not f.before_alpha:
                f.conversion_step(step)
        # beta' * C: skipped when beta' is +-0 (upstream compares as a float)
        no_c = e.new_label("NoC")
        e(isa.s_and_b32(r.t[0], s["beta"], 0x7FFFFFFF), isa.s_cmp_eq_u32(r.t[0], 0), isa.s_cbranch_scc1(no_c))
        c = r.srd["C"]
        self.resource(c, self.arg("C"))
        self.offset(v["coff"], self.arg("strideC1"), self.arg("strideC2") if step.batched else None,
                    pt.dest_type.num_bytes)
        for j in range(vw):
            self.load_f32(v["x"], v["coff"], c, pt.dest_type, j * pt.dest_type.num_bytes)
            e(isa.v_mul_f32(v["x"], s["beta"], v["x"]), isa.v_add_f32(r.acc[j], r.acc[j], v["x"]))
        e.label(no_c)
        for f in epi.steps(feat, AFTER_C):
            f.conversion_step(step)
        self.store_d()

    def text(self) -> str:
        isa, e = self.isa, self.e
        if self.arch.workgroup_id_source == "ttmp":
            e(isa.s_mov_b32(self.r.wgid, ttmp(9)))
        self.load_arguments()
        self.coordinates()
        self.scalars()
        self.accumulate()
        self.epilogue()
        e.out.flush()
        self.lines += kernel_trailer(self.spec, self.regs.counts())
        self.lines.append("")
        return "\n".join(self.lines)


def generate(arch: str, variant: Variant, *, code_object_version: int = 4) -> str:
    """The assembly text of one conversion kernel."""
    return _Writer(get_arch(arch), variant, code_object_version).text()


@attrs.frozen(slots=True)
class ConversionKernel:
    """A KernelSource for the code-object pipeline (frozen, picklable, rendered on demand)."""

    problem_type: ProblemType = attrs.field(repr=False)
    bias_type: DataType | None
    gsu_bucket: int
    vw: int
    name: str
    arch: str
    code_object_version: int = 4

    def assembly_text(self) -> str:
        return generate(self.arch, Variant(self.problem_type, self.bias_type, self.gsu_bucket, self.vw, self.name),
                        code_object_version=self.code_object_version)
