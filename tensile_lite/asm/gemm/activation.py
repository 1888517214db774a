"""The activations a fused epilogue applies, as the runtime numbers them, and their f32 instruction
sequences (spec/epilogue_semantics.md §2.2: one rounding per instruction, `v_exp_f32` and
`v_rcp_f32` for the transcendental steps, constants as upstream's bit patterns).

A kernel built for a selector (`all`, `hipblaslt_all`) dispatches at run time on `activationType`;
the first entry of its list (`none`) is the fall-through, so any value the list does not name
applies no activation, as upstream's kernels do.

Integer compute (i32) has only the kinds upstream defines for it (abs, clippedrelu, leakyrelu, relu;
hipblaslt_all: relu), in i32 arithmetic with wrap-around: abs = max(-x, x), leakyrelu multiplies by
the low 32 bits, clippedrelu's 0 is the integer 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.isa import Instruction
from tensile_lite.asm.operands import Reg


@attrs.frozen(slots=True)
class Kind:
    name: str
    value: int           # the runtime's ActivationType enum
    extra_args: int      # activationAlpha, activationBeta ... it reads
    hipblaslt: bool      # in hipBLASLt's set (`hipblaslt_all`), not only Tensile's


# Forward f32 activations in enum order (dgelu, 8, is gradient-only and not built).
KINDS: tuple[Kind, ...] = (
    Kind("none", 0, 0, True), Kind("abs", 1, 0, False), Kind("clippedrelu", 2, 2, False),
    Kind("gelu", 3, 0, True), Kind("leakyrelu", 4, 1, False), Kind("relu", 5, 0, True),
    Kind("sigmoid", 6, 0, False), Kind("tanh", 7, 2, False), Kind("geluscaling", 9, 1, False),
    Kind("silu", 10, 0, False),
)
BY_NAME: Mapping[str, Kind] = {k.name: k for k in KINDS}
# the kinds upstream builds for i32 activations (spec §2.1)
INTEGER_KINDS = frozenset({"none", "abs", "clippedrelu", "leakyrelu", "relu"})

L2E = 0x3FB8AA3B           # log2(e) as f32
GELU_K0 = 0x3F4C422A       # sqrt(2/pi)
GELU_K1 = 0x3D372713       # 0.044715
ONE_HALF = 0.5


def kinds_for(selector: str, *, integer: bool = False) -> tuple[Kind, ...]:
    """The kinds a kernel built for `selector` applies (in i32 when `integer`), `none` first."""
    if selector == "hipblaslt_all":
        kinds = tuple(k for k in KINDS if k.hipblaslt)
    elif selector == "all":
        kinds = KINDS
    else:
        kinds = (KINDS[0],)
    return tuple(k for k in kinds if k.name in INTEGER_KINDS) if integer else kinds


class _Act:
    """Emits one activation on one f32 VGPR in place, with one VGPR of scratch."""

    def __init__(self, e: Emitter, alpha: Reg | None, beta: Reg | None) -> None:
        self.e = e
        self.isa = e.isa
        self.vcc = e.plan.arch.vcc
        self.trans_wait = e.plan.arch.hazards.trans_use
        self.alpha = alpha
        self.beta = beta

    def _trans(self, ins: Instruction) -> None:
        self.e(ins)
        # gfx94x+: a transcendental result needs wait states before its use
        self.e.nops(self.trans_wait)

    def exp(self, x: Reg) -> None:
        self.e(self.isa.v_mul_f32(x, L2E, x))
        self._trans(self.isa.v_exp_f32(x, x))

    def tanh_core(self, x: Reg) -> None:
        """x = tanh(x) = 1 - 2 / (exp(2x) + 1)."""
        isa = self.isa
        self.e(isa.v_mul_f32(x, 2.0, x))
        self.exp(x)
        self.e(isa.v_add_f32(x, 1.0, x))
        self._trans(isa.v_rcp_f32(x, x))
        self.e(isa.v_fma_f32(x, -2.0, x, 1.0))

    def sigmoid_into(self, dst: Reg, x: Reg) -> None:
        isa = self.isa
        self.e(isa.v_mul_f32(dst, -1.0, x))
        self.exp(dst)
        self.e(isa.v_add_f32(dst, 1.0, dst))
        self._trans(isa.v_rcp_f32(dst, dst))

    # ---- kinds -------------------------------------------------------------------------------
    def abs(self, x: Reg, t: Reg) -> None:
        self.e(self.isa.v_and_b32(x, 0x7FFFFFFF, x))

    def clippedrelu(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        assert self.alpha is not None and self.beta is not None
        self.e(isa.v_cmp_gt_f32(self.vcc, x, self.alpha), isa.v_min_f32(x, self.beta, x),
               isa.v_cndmask_b32(x, 0, x, self.vcc))

    def gelu(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        self.e(isa.v_mul_f32(t, GELU_K1, x), isa.v_fma_f32(t, x, t, 1.0), isa.v_mul_f32(t, x, t),
               isa.v_mul_f32(t, GELU_K0, t))
        self.tanh_core(t)
        self.e(isa.v_add_f32(t, 1.0, t), isa.v_mul_f32(t, x, t), isa.v_mul_f32(x, ONE_HALF, t))

    def geluscaling(self, x: Reg, t: Reg) -> None:
        assert self.alpha is not None
        self.gelu(x, t)
        self.e(self.isa.v_mul_f32(x, self.alpha, x))

    def leakyrelu(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        assert self.alpha is not None
        self.e(isa.v_mul_f32(t, self.alpha, x), isa.v_cmp_ge_f32(self.vcc, x, 0),
               isa.v_cndmask_b32(x, t, x, self.vcc))

    def relu(self, x: Reg, t: Reg) -> None:
        self.e(self.isa.v_max_f32(x, x, 0))

    def sigmoid(self, x: Reg, t: Reg) -> None:
        self.sigmoid_into(x, x)

    def tanh(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        assert self.alpha is not None and self.beta is not None
        self.e(isa.v_mul_f32(x, self.alpha, x))
        self.tanh_core(x)
        self.e(isa.v_mul_f32(x, self.beta, x))

    def silu(self, x: Reg, t: Reg) -> None:
        self.sigmoid_into(t, x)
        self.e(self.isa.v_mul_f32(x, x, t))


class _IntAct(_Act):
    """The i32 forms (spec §2.2, "The i32 forms")."""

    def abs(self, x: Reg, t: Reg) -> None:
        self.e(self.isa.v_sub_u32(t, 0, x), self.isa.v_max_i32(x, t, x))

    def clippedrelu(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        assert self.alpha is not None and self.beta is not None
        self.e(isa.v_cmp_gt_i32(self.vcc, x, self.alpha), isa.v_min_i32(x, self.beta, x),
               isa.v_cndmask_b32(x, 0, x, self.vcc))

    def leakyrelu(self, x: Reg, t: Reg) -> None:
        isa = self.isa
        assert self.alpha is not None
        self.e(isa.v_mul_lo_u32(t, self.alpha, x), isa.v_cmp_le_i32(self.vcc, 0, x),
               isa.v_cndmask_b32(x, t, x, self.vcc))

    def relu(self, x: Reg, t: Reg) -> None:
        self.e(self.isa.v_max_i32(x, 0, x))


def emitter_for(e: Emitter, kind: Kind, alpha: Reg | None, beta: Reg | None, *,
                integer: bool = False) -> Callable[[Reg, Reg], None]:
    """A function emitting `kind` on (value, scratch) registers (i32 forms when `integer`)."""
    return getattr((_IntAct if integer else _Act)(e, alpha, beta), kind.name)


def apply(e: Emitter, selector: str, values: list[Reg], scratch: Reg, act_type: Reg | None,
          alpha: Reg | None, beta: Reg | None, *, integer: bool = False) -> None:
    """Every register of `values` through the activation `act_type` selects (run-time dispatch)."""
    kinds = kinds_for(selector, integer=integer)[1:]
    if not kinds:
        return
    isa = e.isa
    end = e.new_label("ActEnd")
    labels = [e.new_label(f"Act_{k.name}") for k in kinds]
    assert act_type is not None
    for kind, label in zip(kinds, labels, strict=True):
        e(isa.s_cmp_eq_u32(act_type, kind.value), isa.s_cbranch_scc1(label))
    e(isa.s_branch(end))
    for i, (kind, label) in enumerate(zip(kinds, labels, strict=True)):
        e.label(label)
        fn = emitter_for(e, kind, alpha, beta, integer=integer)
        for v in values:
            fn(v, scratch)
        if i + 1 < len(kinds):
            e(isa.s_branch(end))
    e.label(end)
