"""MFMA and WMMA instructions: shapes, types, register counts and spellings per architecture group.

Facts from `spec/matrix_instructions.md` §2 (register counts are 32-bit registers per lane, for the
wavefront size hipBLASLt runs: 64 on CDNA, 32 on RDNA) and checked against LLVM by
`tests/asm/test_table_vs_llvm.py`. `passes` is issue cycles / 4 where the spec gives them.

Each entry has a canonical name (the gfx94x-style spelling, `v_mfma_<acc>_<M>x<N>x<K>[_<B>b]_<in>`)
and one spelling per architecture tag; the instruction table builds one row per canonical name.
"""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class MatrixInstruction:
    """One matrix instruction as one target spells and encodes it."""

    name: str            # canonical mnemonic, the same on every target
    spelling: str        # what this target's assembler calls it
    kind: str            # "mfma" | "wmma"
    m: int
    n: int
    k: int
    blocks: int
    a_type: str
    b_type: str
    acc_type: str        # type of C and D
    a_regs: int
    b_regs: int
    cd_regs: int
    passes: int | None = None
    # gfx950 f8f6f4: A/B register count follows the cbsz/blgp format code (0,1: fp8/bf8 -> 8,
    # 2,3: fp6 -> 6, 4: fp4 -> 4); empty for every other instruction.
    format_regs: tuple[int, ...] = ()

    @property
    def multi_block(self) -> bool:
        return self.blocks > 1


@attrs.frozen(slots=True)
class _Entry:
    name: str
    kind: str
    shape: tuple[int, int, int, int]
    types: tuple[str, str, str]
    # tag -> (spelling, a_regs, b_regs, cd_regs, passes)
    variants: tuple[tuple[str, tuple[str, int, int, int, int | None]], ...]
    format_regs: tuple[int, ...] = ()


def _mfma(acc: str, shape: str, inp: str, blocks: int = 1,
          **by_tag: tuple[str | None, int, int, int, int | None]) -> _Entry:
    """An MFMA entry; a tag's spelling None means the canonical name."""
    m, n, k = (int(x) for x in shape.split("x"))
    bpart = f"{blocks}b_" if blocks > 1 else ""
    name = f"v_mfma_{acc}_{shape}_{bpart}{inp}"
    a_type, _, b_type = inp.partition("_")
    variants = tuple((tag.replace("_plus", "+"), (spell or name, a, b, cd, p))
                     for tag, (spell, a, b, cd, p) in by_tag.items())
    return _Entry(name, "mfma", (m, n, k, blocks), (a_type, b_type or a_type, acc), variants)


def _wmma(acc: str, inp: str, k: int = 16, **by_tag: tuple[int, int, int, int | None]) -> _Entry:
    name = f"v_wmma_{acc}_16x16x{k}_{inp}"
    a_type, _, b_type = inp.partition("_")
    variants = tuple((tag.replace("_plus", "+"), (name, a, b, cd, p)) for tag, (a, b, cd, p) in by_tag.items())
    return _Entry(name, "wmma", (16, 16, k, 1), (a_type, b_type or a_type, acc), variants)


# gfx908/gfx90a spell the input type without an underscore ("...x8f16"); gfx94x added the
# underscore and the explicit block count (spec §1.2). gfx908 keeps C/D in AGPRs only.
_ENTRIES: tuple[_Entry, ...] = (
    # f16
    _mfma("f32", "16x16x16", "f16", gfx908=("v_mfma_f32_16x16x16f16", 2, 2, 4, 8),
          gfx90a=("v_mfma_f32_16x16x16f16", 2, 2, 4, 8), gfx94x_plus=(None, 2, 2, 4, 4)),
    _mfma("f32", "32x32x8", "f16", gfx908=("v_mfma_f32_32x32x8f16", 2, 2, 16, 16),
          gfx90a=("v_mfma_f32_32x32x8f16", 2, 2, 16, 16), gfx94x_plus=(None, 2, 2, 16, 8)),
    _mfma("f32", "16x16x4", "f16", 4, gfx908=("v_mfma_f32_16x16x4f16", 2, 2, 16, 8),
          gfx90a=("v_mfma_f32_16x16x4f16", 2, 2, 16, 8), gfx94x_plus=(None, 2, 2, 16, 8)),
    _mfma("f32", "4x4x4", "f16", 16, gfx908=("v_mfma_f32_4x4x4f16", 2, 2, 4, 2),
          gfx90a=("v_mfma_f32_4x4x4f16", 2, 2, 4, 2), gfx94x_plus=(None, 2, 2, 4, 2)),
    _mfma("f32", "16x16x32", "f16", gfx950=(None, 4, 4, 4, None)),
    _mfma("f32", "32x32x16", "f16", gfx950=(None, 4, 4, 16, None)),
    # bf16: gfx90a's "_1k" forms are gfx94x's plain bf16 instructions (spec §1.2)
    _mfma("f32", "16x16x16", "bf16", gfx90a=("v_mfma_f32_16x16x16bf16_1k", 2, 2, 4, 8),
          gfx94x_plus=(None, 2, 2, 4, 4)),
    _mfma("f32", "32x32x8", "bf16", gfx90a=("v_mfma_f32_32x32x8bf16_1k", 2, 2, 16, 16),
          gfx94x_plus=(None, 2, 2, 16, 8)),
    _mfma("f32", "16x16x8", "bf16", gfx908=("v_mfma_f32_16x16x8bf16", 1, 1, 4, 8),
          gfx90a=("v_mfma_f32_16x16x8bf16", 1, 1, 4, 8)),
    _mfma("f32", "32x32x4", "bf16", gfx908=("v_mfma_f32_32x32x4bf16", 1, 1, 16, 16),
          gfx90a=("v_mfma_f32_32x32x4bf16", 1, 1, 16, 16)),
    _mfma("f32", "16x16x32", "bf16", gfx950=(None, 4, 4, 4, None)),
    _mfma("f32", "32x32x16", "bf16", gfx950=(None, 4, 4, 16, None)),
    # f32 and xf32 (xf32 is gfx94x only; gfx950 rejects it, spec §2.3)
    _mfma("f32", "16x16x4", "f32", gfx908=("v_mfma_f32_16x16x4f32", 1, 1, 4, 8),
          gfx90a=("v_mfma_f32_16x16x4f32", 1, 1, 4, 8), gfx94x_plus=(None, 1, 1, 4, 8)),
    _mfma("f32", "32x32x2", "f32", gfx908=("v_mfma_f32_32x32x2f32", 1, 1, 16, 16),
          gfx90a=("v_mfma_f32_32x32x2f32", 1, 1, 16, 16), gfx94x_plus=(None, 1, 1, 16, 16)),
    _mfma("f32", "16x16x8", "xf32", gfx94x=(None, 2, 2, 4, 4)),
    _mfma("f32", "32x32x4", "xf32", gfx94x=(None, 2, 2, 16, 8)),
    # f64 (gfx90a and later)
    _mfma("f64", "16x16x4", "f64", gfx90a=("v_mfma_f64_16x16x4f64", 2, 2, 8, 8),
          gfx94x_plus=(None, 2, 2, 8, 8)),
    # i8: gfx908/gfx90a K=16/8 with one register; gfx94x doubled K; gfx950 doubled it again
    _mfma("i32", "16x16x16", "i8", gfx908=("v_mfma_i32_16x16x16i8", 1, 1, 4, 8),
          gfx90a=("v_mfma_i32_16x16x16i8", 1, 1, 4, 8)),
    _mfma("i32", "32x32x8", "i8", gfx908=("v_mfma_i32_32x32x8i8", 1, 1, 16, 16),
          gfx90a=("v_mfma_i32_32x32x8i8", 1, 1, 16, 16)),
    _mfma("i32", "16x16x32", "i8", gfx94x_plus=(None, 2, 2, 4, 4)),
    _mfma("i32", "32x32x16", "i8", gfx94x_plus=(None, 2, 2, 16, 8)),
    _mfma("i32", "16x16x64", "i8", gfx950=(None, 4, 4, 4, None)),
    _mfma("i32", "32x32x32", "i8", gfx950=(None, 4, 4, 16, None)),
    # fp8/bf8: FNUZ on gfx94x, OCP on gfx950 (same mnemonics, spec §6.1)
    *(_mfma("f32", "16x16x32", f"{a}_{b}", gfx94x_plus=(None, 2, 2, 4, 4))
      for a in ("fp8", "bf8") for b in ("fp8", "bf8")),
    *(_mfma("f32", "32x32x16", f"{a}_{b}", gfx94x_plus=(None, 2, 2, 16, 8))
      for a in ("fp8", "bf8") for b in ("fp8", "bf8")),
)

# gfx950 f8f6f4: default operand width is the fp8 one; cbsz/blgp pick other formats.
_F8F6F4 = (
    attrs.evolve(_mfma("f32", "16x16x128", "f8f6f4", gfx950=(None, 8, 8, 4, None)),
                 types=("f8f6f4", "f8f6f4", "f32"), format_regs=(8, 8, 6, 6, 4)),
    attrs.evolve(_mfma("f32", "32x32x64", "f8f6f4", gfx950=(None, 8, 8, 16, None)),
                 types=("f8f6f4", "f8f6f4", "f32"), format_regs=(8, 8, 6, 6, 4)),
)

# WMMA in wave32: gfx11 replicates A/B across half-waves (8/4 registers), gfx12 splits K (4/2).
_WMMA: tuple[_Entry, ...] = (
    _wmma("f32", "f16", gfx11=(8, 8, 8, 8), gfx12=(4, 4, 8, 4)),
    _wmma("f32", "bf16", gfx11=(8, 8, 8, 8), gfx12=(4, 4, 8, 4)),
    _wmma("f16", "f16", gfx11=(8, 8, 8, None), gfx12=(4, 4, 4, None)),
    _wmma("bf16", "bf16", gfx11=(8, 8, 8, None), gfx12=(4, 4, 4, None)),
    _wmma("i32", "iu8", gfx11=(4, 4, 8, 8), gfx12=(2, 2, 8, 2)),
    _wmma("i32", "iu4", gfx11=(2, 2, 8, None), gfx12=(1, 1, 8, None)),
    *(_wmma("f32", f"{a}_{b}", gfx12=(2, 2, 8, 2)) for a in ("fp8", "bf8") for b in ("fp8", "bf8")),
)

ENTRIES: tuple[_Entry, ...] = _ENTRIES + _F8F6F4 + _WMMA


def matrix_instructions_for(tags: frozenset[str]) -> tuple[MatrixInstruction, ...]:
    """The matrix instructions of a target with these tags (first matching tag of each entry wins)."""
    out = []
    for e in ENTRIES:
        for tag, (spelling, a, b, cd, passes) in e.variants:
            if tag in tags:
                m, n, k, blocks = e.shape
                out.append(MatrixInstruction(e.name, spelling, e.kind, m, n, k, blocks, *e.types,
                                             a, b, cd, passes, e.format_regs))
                break
    return tuple(out)
