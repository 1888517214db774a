"""UseE: the auxiliary output E = cvt_E(t) after the bias, before the activation (spec/epilogue_semantics.md
§1.1 step 7); the GEMM kernel's stores are in e_output.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from tensile_lite.asm.gemm import e_output
from tensile_lite.asm.gemm.convert import bf16_round
from tensile_lite.asm.gemm.epi.base import (
    AFTER_C,
    COMPUTE,
    CONV_LEAD,
    CONV_STRIDES,
    E_TYPE,
    Arg,
    Feature,
    ptr,
    val,
)
from tensile_lite.asm.gemm.features import EpilogueFeatures
from tensile_lite.model import DataType, ProblemType

if TYPE_CHECKING:
    from tensile_lite.asm.gemm.emit import Emitter
    from tensile_lite.asm.gemm.epilogue import Regs, Step
    from tensile_lite.asm.gemm.postgsu import ConversionStep
    from tensile_lite.asm.operands import Reg

# D types the E output is built with: the fp8 packing's constant shares a register with the bf16
# rounding E may need
_D_TYPES = (DataType.S, DataType.H, DataType.B)


@attrs.frozen(slots=True)
class OutputE(Feature):
    name: str = "UseE"
    stage: str = AFTER_C
    gemm_rank: int = 6
    conversion_rank: int = 0
    register_rank: int = 3

    def gemm_registers(self, feat: EpilogueFeatures) -> tuple[str, ...]:
        # the lane's byte offset into the E tile, and that plus the block column's (edge tiles)
        return ("off_e", "addr_e")

    def active(self, feat: EpilogueFeatures) -> bool:
        return feat.use_e

    def problem_reasons(self, pt: ProblemType, feat: EpilogueFeatures) -> list[str]:
        out = []
        if feat.gradient:
            # a gradient kernel reads E as the activation's input (spec/epilogue_semantics.md §1.1
            # step 8b) instead of storing it; not built yet
            out.append("Gradient E input")
        if pt.e_type not in e_output.E_TYPES:
            out.append(f"E type:{pt.e_type.letter}")
        if pt.dest_type not in _D_TYPES:
            out.append(f"E output with D type {pt.dest_type.letter}")
        return out

    def gemm_arguments(self, pt: ProblemType, feat: EpilogueFeatures, activation_fused: bool) -> tuple[Arg, ...]:
        return (ptr("E", COMPUTE), *(val(f"StrideE{i}", "u32") for i in range(pt.num_indices_c - 1)))

    def conversion_arguments(self, pt: ProblemType, feat: EpilogueFeatures) -> dict[int, tuple[Arg, ...]]:
        return {CONV_LEAD: (ptr("E", E_TYPE),),
                CONV_STRIDES: tuple(val(f"strideE{i}", "u32") for i in range(1, pt.num_indices_c))}

    def gemm_lane_setup(self, e: Emitter, w: Regs) -> None:
        e_output.lane_offset(e, w["off_e"], w.row, w.col)

    def gemm_step(self, step: Step) -> None:
        e, w = step.e, step.w
        cd = e.plan.mfma.cd_regs

        def rnd(reg: Reg) -> None:
            bf16_round(e, reg, w.t, e.r.stmp[6], w.nan)
        if step.guard is None:
            e_output.store_full(e, w.values[0:cd], w.c[0:cd], w["off_e"], step.soff_e, step.t0, rnd)
        else:
            e_output.store_edge(e, w.values[0:cd], w.c[0:cd], w["addr_e"], step.guard[0], step.guard[1], rnd)

    def conversion_step(self, step: ConversionStep) -> None:
        w = step.writer
        r, v, pt = w.r, w.r.v, w.pt
        srd = r.srd["X"]
        skip = w.skip_if_null(w.arg("E"))
        w.resource(srd, w.arg("E"))
        w.offset(v["eoff"], w.arg("strideE1"), w.arg("strideE2") if step.batched else None, pt.e_type.num_bytes)
        for j in range(w.variant.vw):
            w.e(w.isa.v_mov_b32(v["x"], r.acc[j]))
            w.store(v["x"], v["eoff"], srd, pt.e_type, j * pt.e_type.num_bytes)
        w.e.label(skip)
