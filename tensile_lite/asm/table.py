"""The instruction table: one row per mnemonic, with its encoding family, operand signature, and
which architectures have it under which spelling.

Row syntax (see `R`): `R(name, family, "slot slot ...", "tag", "tag=spelling", ...)`. The first
availability entry whose tag the target carries decides the spelling (plain "tag" means the row's
name); a target matching none lacks the instruction. Tags: `all`, `gfx9` (every CDNA target),
`gfx908`, `gfx90a`, `gfx90a+` (gfx90a, gfx94x, gfx950), `gfx94x`, `gfx94x+` (gfx94x, gfx950),
`gfx950`, `gfx11` (gfx110x, gfx115x), `gfx12`, `gfx11+` (every RDNA target), and each target's name.

Slot kinds (`kind[:width]`, width in dwords, default 1; what each accepts is decided per target in
`isa.py`):
    sd / ss      scalar destination / source (SGPRs, vcc/exec/m0; sources also ttmp, constants)
    sf           scalar source that may also be a float constant (s_mov_b32)
    sg           SGPRs only (scalar-load and readlane destinations)
    sl           lane-access scalar: SGPR, m0 or an integer inline constant
    vd / vs / vf VGPR destination / VALU source (VGPR, SGPR, constants) / float VALU source
    vb16 / vf16  16-bit VALU source, integer / float (no literals)
    vh           packed-math (VOP3P) source: VGPR, SGPR or an integer inline constant
    vv / vi      VGPR only / VGPR or integer inline constant
    ad / av      AGPR destination / source
    lmd / lms    lane mask (wave64: SGPR pair, vcc, exec; wave32: one SGPR, vcc_lo, exec_lo)
    null         the null register
    i16 u16 nop prio sleep bar    immediates with their ranges
    lbl          a Label          waitcnt  a WaitCounts        cnt:<counter>  a wait count
    srd sbase smoff               buffer resource, SMEM base pair, SMEM offset (immediate or SGPR)
    soff baddr                    MUBUF soffset, MUBUF vaddr (VGPR or off)
    gaddr gsaddr                  global vaddr (VGPR pair with saddr off, else one VGPR), saddr
    md ms mc                      MFMA D, A/B, C (AGPR or, on gfx90a+, VGPR; C may be a constant)
    wd ws wmc                     WMMA D, A/B, C (VGPRs; C may be a constant)
Names of the instruction methods are the rows' names, so they must be unique.
"""

from __future__ import annotations

from typing import TypedDict, Unpack

import attrs

from tensile_lite.asm.arch import LDS, LOAD, SMEM, STORE
from tensile_lite.asm.matrix import ENTRIES

SOP1, SOP2, SOPC, SOPK, SOPP, SMEM_F = "sop1", "sop2", "sopc", "sopk", "sopp", "smem"
VOP1, VOP2, VOP3, VOP3P, VOPC = "vop1", "vop2", "vop3", "vop3p", "vopc"
MUBUF, GLOBAL, DS, MFMA, WMMA, WAIT = "mubuf", "global", "ds", "mfma", "wmma", "wait"
VALU_FAMILIES = frozenset({VOP1, VOP2, VOP3, VOP3P, VOPC})

# Modifier groups a row may accept (see modifiers.py).
M_BUF, M_GLB, M_DS, M_DS2, M_SEL, M_MFMA, M_DPP = "buf", "glb", "ds", "ds2", "sel", "mfma", "dpp"


@attrs.frozen(slots=True)
class Variant:
    tag: str
    spelling: str
    sig: tuple[str, ...] | None = None   # overrides the row's signature on these targets
    mods: tuple[str, ...] | None = None  # overrides the row's modifier groups on these targets


@attrs.frozen(slots=True)
class Row:
    name: str
    family: str
    sig: tuple[str, ...]
    variants: tuple[Variant, ...]
    mods: tuple[str, ...] = ()
    mem: str | None = None                  # the memory event the instruction leaves outstanding
    # "bus1": one scalar source even on gfx10+ (64-bit shifts); "atomic": an atomic without return
    flags: frozenset[str] = frozenset()
    matrix: str | None = None               # canonical matrix-instruction name
    # tags where the assembler still accepts the instruction but kernels must not use it
    deprecated: tuple[str, ...] = ()


def R(name: str, family: str, sig: str, *avail: str, mods: tuple[str, ...] = (), mem: str | None = None,
      flags: tuple[str, ...] = (), deprecated: tuple[str, ...] = ()) -> Row:
    variants = []
    for a in avail or ("all",):
        tag, _, spelling = a.partition("=")
        variants.append(Variant(tag, spelling or name))
    return Row(name, family, tuple(sig.split()), tuple(variants), mods, mem, frozenset(flags), None,
               deprecated)


class _RowOptions(TypedDict, total=False):
    """R's keyword arguments, passed through by _same."""

    mods: tuple[str, ...]
    mem: str | None
    flags: tuple[str, ...]
    deprecated: tuple[str, ...]


def _same(names: str, family: str, sig: str, *avail: str, **kw: Unpack[_RowOptions]) -> list[Row]:
    return [R(n, family, sig, *avail, **kw) for n in names.split()]


_CMP = "eq lg gt ge lt le"
_SHIFTS64 = ("bus1",)

ROWS_SCALAR: tuple[Row, ...] = (
    # SOP1
    R("s_mov_b32", SOP1, "sd sf"),
    *_same("s_cmov_b32 s_not_b32 s_brev_b32 s_bcnt1_i32_b32 s_sext_i32_i16 s_abs_i32",
           SOP1, "sd ss"),
    *_same("s_mov_b64 s_cmov_b64 s_not_b64", SOP1, "sd:2 ss:2"),
    R("s_ff1_i32_b32", SOP1, "sd ss", "gfx9", "gfx11+=s_ctz_i32_b32"),
    R("s_flbit_i32_b32", SOP1, "sd ss", "gfx9", "gfx11+=s_clz_i32_u32"),
    *_same("s_and_saveexec_b64 s_or_saveexec_b64", SOP1, "sd:2 ss:2"),
    # the 32-bit exec forms exist only where wave32 does
    *_same("s_and_saveexec_b32 s_or_saveexec_b32", SOP1, "sd ss", "gfx11+"),
    R("s_getpc_b64", SOP1, "sd:2"),
    R("s_setpc_b64", SOP1, "sbase"),
    R("s_swappc_b64", SOP1, "sd:2 sbase"),
    # SOP2; gfx12 renamed the carry forms (s_add_u32 -> s_add_co_u32 ...)
    R("s_add_u32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_add_co_u32"),
    R("s_addc_u32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_add_co_ci_u32"),
    R("s_sub_u32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_sub_co_u32"),
    R("s_subb_u32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_sub_co_ci_u32"),
    R("s_add_i32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_add_co_i32"),
    R("s_sub_i32", SOP2, "sd ss ss", "gfx9", "gfx11", "gfx12=s_sub_co_i32"),
    *_same("s_mul_i32 s_mul_hi_u32 s_mul_hi_i32 s_and_b32 s_or_b32 s_xor_b32 s_lshl_b32 s_lshr_b32 "
           "s_ashr_i32 s_min_u32 s_max_u32 s_min_i32 s_max_i32 s_cselect_b32 s_bfe_u32 s_bfe_i32 "
           "s_bfm_b32 s_pack_ll_b32_b16 s_absdiff_i32 s_lshl1_add_u32 s_lshl2_add_u32 s_lshl3_add_u32 "
           "s_lshl4_add_u32", SOP2, "sd ss ss"),
    *_same("s_and_b64 s_or_b64 s_xor_b64 s_cselect_b64", SOP2, "sd:2 ss:2 ss:2"),
    *_same("s_lshl_b64 s_lshr_b64", SOP2, "sd:2 ss:2 ss"),
    R("s_andn2_b32", SOP2, "sd ss ss", "gfx9", "gfx11+=s_and_not1_b32"),
    R("s_orn2_b32", SOP2, "sd ss ss", "gfx9", "gfx11+=s_or_not1_b32"),
    R("s_andn2_b64", SOP2, "sd:2 ss:2 ss:2", "gfx9", "gfx11+=s_and_not1_b64"),
    # SOPC
    *(R(f"s_cmp_{c}_{t}", SOPC, "ss ss") for t in ("u32", "i32") for c in _CMP.split()),
    *_same("s_cmp_eq_u64 s_cmp_lg_u64", SOPC, "ss:2 ss:2"),
    *_same("s_bitcmp0_b32 s_bitcmp1_b32", SOPC, "ss ss"),
    # SOPK; gfx12 dropped the compare-with-constant forms
    R("s_movk_i32", SOPK, "sd i16"),
    R("s_cmovk_i32", SOPK, "sd i16"),
    R("s_addk_i32", SOPK, "sd i16", "gfx9", "gfx11", "gfx12=s_addk_co_i32"),
    R("s_mulk_i32", SOPK, "sd i16"),
    *(R(f"s_cmpk_{c}_u32", SOPK, "sd u16", "gfx9", "gfx11") for c in _CMP.split()),
    *(R(f"s_cmpk_{c}_i32", SOPK, "sd i16", "gfx9", "gfx11") for c in _CMP.split()),
    # SOPP
    R("s_nop", SOPP, "nop"),
    R("s_endpgm", SOPP, ""),
    # gfx12 split the workgroup barrier into signal + wait
    R("s_barrier", SOPP, "", "gfx9", "gfx11"),
    R("s_barrier_signal", SOPP, "bar", "gfx12"),
    R("s_barrier_wait", SOPP, "bar", "gfx12"),
    R("s_setprio", SOPP, "prio"),
    R("s_sleep", SOPP, "sleep"),
    *_same("s_branch s_cbranch_scc0 s_cbranch_scc1 s_cbranch_vccz s_cbranch_vccnz s_cbranch_execz "
           "s_cbranch_execnz", SOPP, "lbl"),
    # waits: gfx9/gfx11 s_waitcnt; gfx11 counts stores separately; gfx12 one instruction per counter
    # gfx12 still encodes s_waitcnt, but "deprecated and codegen should stop using it" (llvm-project
    # PR 77336); it waits for idle there (composable_kernel PR 3003)
    R("s_waitcnt", WAIT, "waitcnt", "gfx9", "gfx11", deprecated=("gfx12",)),
    R("s_waitcnt_vscnt", WAIT, "null cnt:vscnt", "gfx11"),
    R("s_wait_loadcnt", WAIT, "cnt:loadcnt", "gfx12"),
    R("s_wait_storecnt", WAIT, "cnt:storecnt", "gfx12"),
    R("s_wait_dscnt", WAIT, "cnt:dscnt", "gfx12"),
    R("s_wait_kmcnt", WAIT, "cnt:kmcnt", "gfx12"),
    # SMEM
    R("s_load_dword", SMEM_F, "sg sbase smoff", "gfx9", "gfx11+=s_load_b32", mem=SMEM),
    R("s_load_dwordx2", SMEM_F, "sg:2 sbase smoff", "gfx9", "gfx11+=s_load_b64", mem=SMEM),
    R("s_load_dwordx4", SMEM_F, "sg:4 sbase smoff", "gfx9", "gfx11+=s_load_b128", mem=SMEM),
    R("s_load_dwordx8", SMEM_F, "sg:8 sbase smoff", "gfx9", "gfx11+=s_load_b256", mem=SMEM),
    R("s_load_dwordx16", SMEM_F, "sg:16 sbase smoff", "gfx9", "gfx11+=s_load_b512", mem=SMEM),
)

_NC = "gfx11+=v_{}_nc_u32"

ROWS_VECTOR: tuple[Row, ...] = (
    # VOP1
    R("v_mov_b32", VOP1, "vd vf", mods=(M_DPP,)),
    R("v_mov_b64", VOP1, "vd:2 vs:2", "gfx94x+"),
    R("v_readfirstlane_b32", VOP1, "sg vv"),
    *_same("v_cvt_f32_u32 v_cvt_f32_i32", VOP1, "vd vs"),
    R("v_cvt_f32_f16", VOP1, "vd vf16"),
    *_same("v_cvt_u32_f32 v_cvt_i32_f32 v_cvt_f16_f32 v_rcp_f32 v_rcp_iflag_f32 v_exp_f32 "
           "v_log_f32 v_sqrt_f32 v_rsq_f32", VOP1, "vd vf"),
    *_same("v_not_b32 v_bfrev_b32", VOP1, "vd vs"),
    R("v_ffbh_u32", VOP1, "vd vs", "gfx9", "gfx11+=v_clz_i32_u32"),
    R("v_ffbl_b32", VOP1, "vd vs", "gfx9", "gfx11+=v_ctz_i32_b32"),
    R("v_swap_b32", VOP1, "vd vd"),
    R("v_accvgpr_mov_b32", VOP1, "ad av", "gfx90a+"),
    # fp8/bf8 conversions: FNUZ on gfx94x, OCP on gfx950/gfx12 (same mnemonics)
    *_same("v_cvt_f32_fp8 v_cvt_f32_bf8", VOP1, "vd vs", "gfx94x+", "gfx12"),
    *_same("v_cvt_pk_f32_fp8 v_cvt_pk_f32_bf8", VOP1, "vd:2 vb16", "gfx94x+", "gfx12"),
    R("v_cvt_f32_bf16", VOP1, "vd vb16", "gfx950"),
    # VOP2; gfx10+ spells the carry-less adds _nc and the carry-in adds _co_ci
    R("v_add_u32", VOP2, "vd vs vs", "gfx9", _NC.format("add"), mods=(M_DPP,)),
    R("v_sub_u32", VOP2, "vd vs vs", "gfx9", _NC.format("sub")),
    R("v_subrev_u32", VOP2, "vd vs vs", "gfx9", _NC.format("subrev")),
    *_same("v_add_co_u32 v_sub_co_u32 v_subrev_co_u32", VOP2, "vd lmd vs vs"),
    R("v_addc_co_u32", VOP2, "vd lmd vs vs lms", "gfx9", "gfx11+=v_add_co_ci_u32"),
    R("v_subb_co_u32", VOP2, "vd lmd vs vs lms", "gfx9", "gfx11+=v_sub_co_ci_u32"),
    R("v_subbrev_co_u32", VOP2, "vd lmd vs vs lms", "gfx9", "gfx11+=v_subrev_co_ci_u32"),
    *_same("v_mul_u32_u24 v_mul_hi_u32_u24 v_mul_i32_i24 v_lshlrev_b32 v_lshrrev_b32 v_ashrrev_i32 "
           "v_and_b32 v_or_b32 v_xor_b32 v_max_u32 v_min_u32 v_max_i32 v_min_i32", VOP2, "vd vs vs"),
    *_same("v_mul_f32 v_add_f32 v_sub_f32 v_subrev_f32", VOP2, "vd vf vf", mods=(M_DPP,)),
    # gfx12 renamed the IEEE-less min/max to *_num_*
    R("v_max_f32", VOP2, "vd vf vf", "gfx9", "gfx11", "gfx12=v_max_num_f32", mods=(M_DPP,)),
    R("v_min_f32", VOP2, "vd vf vf", "gfx9", "gfx11", "gfx12=v_min_num_f32", mods=(M_DPP,)),
    R("v_fmac_f32", VOP2, "vd vf vf"),
    R("v_mac_f32", VOP2, "vd vf vf", "gfx908", "gfx90a"),
    R("v_cndmask_b32", VOP2, "vd vs vs lms"),
    # VOP3-only on gfx9 (so no literal there), VOP2 on gfx10+
    R("v_cvt_pkrtz_f16_f32", VOP3, "vd vf vf", "gfx9", "gfx11+=v_cvt_pk_rtz_f16_f32"),
    # VOP3-only
    # gfx11+ reads the shift of v_alignbit/v_alignbyte as a 16-bit operand
    *_same("v_alignbit_b32 v_alignbyte_b32", VOP3, "vd vs vs vb16"),
    *_same("v_mad_u32_u24 v_mad_i32_i24 v_lshl_add_u32 v_add_lshl_u32 v_lshl_or_b32 v_and_or_b32 "
           "v_or3_b32 v_add3_u32 v_xad_u32 v_bfe_u32 v_bfe_i32 v_bfi_b32 v_perm_b32 v_med3_i32 v_med3_u32 v_max3_i32 v_max3_u32 v_min3_i32 v_min3_u32",
           VOP3, "vd vs vs vs"),
    *_same("v_mul_lo_u32 v_mul_hi_u32 v_mul_hi_i32", VOP3, "vd vs vs"),
    R("v_mad_u64_u32", VOP3, "vd:2 lmd vs vs vs:2", "gfx9", "gfx11", "gfx12=v_mad_co_u64_u32"),
    R("v_fma_f32", VOP3, "vd vf vf vf"),
    R("v_med3_f32", VOP3, "vd vf vf vf", "gfx9", "gfx11", "gfx12=v_med3_num_f32"),
    R("v_max3_f32", VOP3, "vd vf vf vf", "gfx9", "gfx11", "gfx12=v_max3_num_f32"),
    R("v_min3_f32", VOP3, "vd vf vf vf", "gfx9", "gfx11", "gfx12=v_min3_num_f32"),
    R("v_fma_f64", VOP3, "vd:2 vf:2 vf:2 vf:2"),
    *_same("v_add_f64 v_mul_f64", VOP3, "vd:2 vf:2 vf:2"),
    R("v_pack_b32_f16", VOP3, "vd vf16 vf16", mods=(M_SEL,)),
    *_same("v_lshlrev_b64 v_lshrrev_b64 v_ashrrev_i64", VOP3, "vd:2 vs vs:2", flags=_SHIFTS64),
    R("v_readlane_b32", VOP3, "sg vv sl"),
    R("v_writelane_b32", VOP3, "vd sl sl"),
    *_same("v_cvt_pk_fp8_f32 v_cvt_pk_bf8_f32", VOP3, "vd vf vf", "gfx94x+", "gfx12", mods=(M_SEL,)),
    # op_sel picks the destination byte on gfx94x/gfx950; gfx12 has byte_sel instead
    *(attrs.evolve(R(n, VOP3, "vd vf vs", "gfx94x+", "gfx12", mods=(M_SEL,)),
                   variants=(Variant("gfx94x+", n), Variant("gfx12", n, mods=())))
      for n in ("v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32")),
    R("v_cvt_pk_bf16_f32", VOP3, "vd vf vf", "gfx950"),
    # VOP3P (packed math); the f32 pairs exist on gfx90a and later CDNA only
    *_same("v_pk_fma_f16 v_pk_mad_u16", VOP3P, "vd vh vh vh", mods=(M_SEL,)),
    R("v_pk_min_f16", VOP3P, "vd vh vh", "gfx9", "gfx11", "gfx12=v_pk_min_num_f16", mods=(M_SEL,)),
    *_same("v_pk_mul_f16 v_pk_add_f16 v_pk_add_u16 v_pk_sub_u16 v_pk_mul_lo_u16 "
           "v_pk_lshlrev_b16 v_pk_lshrrev_b16", VOP3P, "vd vh vh", mods=(M_SEL,)),
    R("v_pk_max_f16", VOP3P, "vd vh vh", "gfx9", "gfx11", "gfx12=v_pk_max_num_f16", mods=(M_SEL,)),
    R("v_pk_fma_f32", VOP3P, "vd:2 vh:2 vh:2 vh:2", "gfx90a+", mods=(M_SEL,)),
    *_same("v_pk_mul_f32 v_pk_add_f32 v_pk_mov_b32", VOP3P, "vd:2 vh:2 vh:2", "gfx90a+", mods=(M_SEL,)),
    R("v_dot2_f32_f16", VOP3P, "vd vh vh vh"),
    R("v_fma_mix_f32", VOP3P, "vd vh vh vh", mods=(M_SEL,)),
    R("v_accvgpr_read_b32", VOP3P, "vd av", "gfx9"),
    R("v_accvgpr_write_b32", VOP3P, "ad vi", "gfx9"),
    # VOPC
    *(R(f"v_cmp_{c}_{t}", VOPC, "lmd vs vs") for t in ("u32", "i32")
      for c in ("eq", "ne", "lt", "le", "gt", "ge")),
    *(R(f"v_cmp_{c}_{t}", VOPC, "lmd vs:2 vs:2") for t in ("u64",) for c in ("eq", "ne", "lt", "ge")),
    *(R(f"v_cmp_{c}_f32", VOPC, "lmd vf vf") for c in ("eq", "neq", "lt", "le", "gt", "ge", "u", "o")),
    R("v_cmp_class_f32", VOPC, "lmd vf vs"),
)

# Memory: gfx11 renamed buffer/global/ds/smem by bit width (buffer_load_dword -> buffer_load_b32,
# ds_read_b32 -> ds_load_b32, ds_read2_b32 -> ds_load_2addr_b32 ...).
_BUF_LOADS = (("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx3", "b96", 3), ("dwordx4", "b128", 4),
              ("ushort", "u16", 1), ("sshort", "i16", 1), ("ubyte", "u8", 1), ("sbyte", "i8", 1),
              ("short_d16", "d16_b16", 1), ("short_d16_hi", "d16_hi_b16", 1),
              ("ubyte_d16", "d16_u8", 1), ("ubyte_d16_hi", "d16_hi_u8", 1))
_BUF_STORES = (("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx3", "b96", 3), ("dwordx4", "b128", 4),
               ("short", "b16", 1), ("short_d16_hi", "d16_hi_b16", 1), ("byte", "b8", 1),
               ("byte_d16_hi", "d16_hi_b8", 1))
_GLB_LOADS = (("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx4", "b128", 4), ("ushort", "u16", 1),
              ("short_d16", "d16_b16", 1), ("short_d16_hi", "d16_hi_b16", 1))
_GLB_STORES = (("dword", "b32", 1), ("dwordx2", "b64", 2), ("dwordx4", "b128", 4), ("short", "b16", 1),
               ("short_d16_hi", "d16_hi_b16", 1))
_DS_READS = (("b32", "b32", 1), ("b64", "b64", 2), ("b96", "b96", 3), ("b128", "b128", 4),
             ("u16", "u16", 1), ("u16_d16", "u16_d16", 1), ("u16_d16_hi", "u16_d16_hi", 1),
             ("u8", "u8", 1))
_DS_WRITES = (("b32", "b32", 1), ("b64", "b64", 2), ("b96", "b96", 3), ("b128", "b128", 4),
              ("b16", "b16", 1), ("b8", "b8", 1), ("b16_d16_hi", "b16_d16_hi", 1),
              ("b8_d16_hi", "b8_d16_hi", 1))

ROWS_MEMORY: tuple[Row, ...] = (
    *(R(f"buffer_load_{old}", MUBUF, f"vd:{n} baddr srd soff", "gfx9", f"gfx11+=buffer_load_{new}",
        mods=(M_BUF,), mem=LOAD) for old, new, n in _BUF_LOADS),
    *(R(f"buffer_store_{old}", MUBUF, f"vv:{n} baddr srd soff", "gfx9", f"gfx11+=buffer_store_{new}",
        mods=(M_BUF,), mem=STORE) for old, new, n in _BUF_STORES),
    # atomics are listed in their no-return form (what a kernel storing results needs)
    R("buffer_atomic_add_f32", MUBUF, "vv baddr srd soff", "gfx9", "gfx11+", mods=(M_BUF,), mem=STORE,
      flags=("atomic",)),
    R("buffer_atomic_cmpswap", MUBUF, "vv:2 baddr srd soff", "gfx9", "gfx11+=buffer_atomic_cmpswap_b32",
      mods=(M_BUF,), mem=STORE, flags=("atomic",)),
    # returning atomic (the old value comes back in vdata; glc / sc0 asks for it): split-K counters
    # (gfx12 spells the return request as a temporal hint these modifiers do not model: no modifiers there)
    Row("buffer_atomic_dec", MUBUF, ("vd", "baddr", "srd", "soff"),
        (Variant("gfx9", "buffer_atomic_dec"), Variant("gfx11", "buffer_atomic_dec_u32"),
         Variant("gfx12", "buffer_atomic_dec_u32", mods=())), (M_BUF,), LOAD),
    # the agent-scope release / acquire of the memory model where L2 is per XCD (write back dirty lines,
    # invalidate stale ones), and gfx90a's acquire (invalidate the CU's L1)
    R("buffer_wbl2_sc1", SOPP, "", "gfx94x+=buffer_wbl2 sc1", mem=STORE),
    R("buffer_inv_sc1", SOPP, "", "gfx94x+=buffer_inv sc1"),
    R("buffer_wbinvl1_vol", SOPP, "", "gfx908", "gfx90a"),
    *(R(f"global_load_{old}", GLOBAL, f"vd:{n} gaddr gsaddr", "gfx9", f"gfx11+=global_load_{new}",
        mods=(M_GLB,), mem=LOAD) for old, new, n in _GLB_LOADS),
    *(R(f"global_store_{old}", GLOBAL, f"gaddr vv:{n} gsaddr", "gfx9", f"gfx11+=global_store_{new}",
        mods=(M_GLB,), mem=STORE) for old, new, n in _GLB_STORES),
    R("global_atomic_add_f32", GLOBAL, "gaddr vv gsaddr", mods=(M_GLB,), mem=STORE, flags=("atomic",)),
    *(R(f"ds_read_{old}", DS, f"vd:{n} vv", "gfx9", f"gfx11+=ds_load_{new}", mods=(M_DS,), mem=LDS)
      for old, new, n in _DS_READS),
    *(R(f"ds_write_{old}", DS, f"vv vv:{n}", "gfx9", f"gfx11+=ds_store_{new}", mods=(M_DS,), mem=LDS)
      for old, new, n in _DS_WRITES),
    *(R(f"ds_read2{st}_{b}", DS, f"vd:{2 * n} vv", "gfx9", f"gfx11+=ds_load_2addr{st2}_{b}",
        mods=(M_DS2,), mem=LDS)
      for b, n in (("b32", 1), ("b64", 2)) for st, st2 in (("", ""), ("st64", "_stride64"))),
    *(R(f"ds_write2{st}_{b}", DS, f"vv vv:{n} vv:{n}", "gfx9", f"gfx11+=ds_store_2addr{st2}_{b}",
        mods=(M_DS2,), mem=LDS)
      for b, n in (("b32", 1), ("b64", 2)) for st, st2 in (("", ""), ("st64", "_stride64"))),
    *_same("ds_bpermute_b32 ds_permute_b32", DS, "vd vv vv", mods=(M_DS,), mem=LDS),
)


def _matrix_rows() -> tuple[Row, ...]:
    rows = []
    for e in ENTRIES:
        variants = []
        for tag, (spelling, a, b, cd, _passes) in e.variants:
            if e.kind == "mfma":
                sig = (f"md:{cd}", f"ms:{a}", f"ms:{b}", f"mc:{cd}")
            else:
                sig = (f"wd:{cd}", f"ws:{a}", f"ws:{b}", f"wmc:{cd}")
            variants.append(Variant(tag, spelling, sig))
        family = MFMA if e.kind == "mfma" else WMMA
        rows.append(Row(e.name, family, variants[0].sig or (), tuple(variants),
                        (M_MFMA,) if family == MFMA else (M_SEL,), None, frozenset(), e.name))
    return tuple(rows)


ROWS: tuple[Row, ...] = ROWS_SCALAR + ROWS_VECTOR + ROWS_MEMORY + _matrix_rows()


def _check_unique() -> None:
    seen: set[str] = set()
    for row in ROWS:
        if row.name in seen:
            raise AssertionError(f"instruction table lists {row.name} twice")
        seen.add(row.name)


_check_unique()
