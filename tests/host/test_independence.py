"""The host (tensile_lite.host) and the kernel (asm/gemm/abi.py, grouped.py) are written apart; here they
must agree, for one solution of every distinct dev-set problem type, ActivationFused and split-K kind:

- argType 0 (and each argType-1 record): every argument the kernel's code-object metadata declares is
  packed by the host at the same offset with the same size, in the same order, and nothing else;
- the values at those offsets are the call's (sizes, strides, pointers, alpha, beta), read back through
  the kernel's offsets and checked against the problem;
- argType 2: each field the kernel reads from a UserArguments struct is where the host writes it, and the
  struct sizes agree.

Each check is also run on a host broken on purpose (swapped stride blocks, swapped stride values, a
shifted struct field) and must fail there.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator

import pytest

from tensile_lite.asm.gemm.abi import solution_layout
from tensile_lite.asm.gemm.grouped import record_bytes, user_argument_offsets
from tensile_lite.host import GemmProblem, args, grouped
from tensile_lite.host.splitk import splits_in_kernel, splits_k
from tensile_lite.model import Solution
from tests.gemm.devset import supported_kernels

# kernel metadata name -> the runtime's name (spec/kernel_anatomy.md §1.5); indices shift where the
# kernel counts strides from 0 and the runtime from 1
_FIXED = {
    "Gemm info": "gemm_count", "kernel info0": "internalArgs", "kernel info1": "internalArgs1",
    "numWG": "numWorkGroups", "D": "d", "C": "c", "A": "a", "B": "b", "E": "e", "biasType": "bias_type",
    "StrideBias": "strideBias", "AddressScaleA": "scaleA", "AddressScaleB": "scaleB",
    "AddressScaleC": "scaleC", "AddressScaleD": "scaleD", "AddressScaleAlphaVec": "scaleAlphaVec",
    "activationAlpha": "activation_0", "activationBeta": "activation_1",
}
_PATTERNS = ((re.compile(r"SizesFree(\d)$"), lambda m, nc: f"size_{m[1]}"),
             (re.compile(r"SizesSum0$"), lambda m, nc: f"size_{nc}"),
             (re.compile(r"stride([DCAB])(\d)$"), lambda m, nc: f"stride{m[1]}{int(m[2]) + 1}"),
             (re.compile(r"StrideE(\d)$"), lambda m, nc: f"strideE{int(m[1]) + 1}"))


def runtime_name(kernel_name: str, num_indices_c: int) -> str:
    for pattern, rename in _PATTERNS:
        m = pattern.match(kernel_name)
        if m:
            return rename(m, num_indices_c)
    return _FIXED.get(kernel_name, kernel_name)


def _kind(sol: Solution) -> tuple[str, bool, str]:
    split = "single kernel" if splits_in_kernel(sol) else "multiple buffer" if splits_k(sol) else "no split"
    return sol.problem_type.name, bool(sol.tuning("ActivationFused")), split


def representatives() -> list[Solution]:
    """One supported dev-set kernel per (problem type, ActivationFused, split-K kind)."""
    seen: dict[tuple[str, bool, str], Solution] = {}
    for sol in supported_kernels():
        seen.setdefault(_kind(sol), sol)
    return list(seen.values())


def _gsus(sol: Solution) -> tuple[int | None, ...]:
    return (1, 4) if splits_k(sol) else (None,)


def layout_mismatches(sol: Solution, host_layout: Callable[..., tuple[tuple[str, int, int], ...]]) -> list[str]:
    """Where the host's argType-0 layout differs from the kernel's declared `.args` (empty: none)."""
    nc = sol.problem_type.num_indices_c
    kernel = [(runtime_name(p.argument.name, nc), p.offset, p.argument.size) for p in solution_layout(sol).arguments]
    out = []
    for gsu in _gsus(sol):
        host = list(host_layout(sol, gsu=gsu))
        if host != kernel:
            diff = [f"{k} vs host {h}" for k, h in zip(kernel, host, strict=False) if k != h][:3]
            out.append(f"{_kind(sol)} gsu {gsu}: kernel {len(kernel)} args, host {len(host)}: {diff}")
    return out


def _problem(sol: Solution) -> GemmProblem:
    """A problem whose sizes and strides are all different numbers."""
    pt = sol.problem_type
    ranks = {"A": len(pt.index_assignments_a), "B": len(pt.index_assignments_b), "C": pt.num_indices_c,
             "D": pt.num_indices_c}
    base = {"A": 1000, "B": 2000, "C": 3000, "D": 4000}
    strides = {t: tuple(base[t] + 7 * i for i in range(ranks[t] - 1)) for t in "ABCD"}
    return GemmProblem(37, 41, 43, 3 if pt.num_indices_c == 3 else 1, strides_a=strides["A"],
                       strides_b=strides["B"], strides_c=strides["C"], strides_d=strides["D"])


_BUFFERS = {"A": 0xA000_0000, "B": 0xB000_0000, "C": 0xC000_0000, "D": 0xD000_0000, "workspace": 0xE000_0000,
            "synchronizer": 0xF000_0000, "scaleA": 0x1100, "scaleB": 0x2200, "scaleC": 0x3300, "scaleD": 0x4400,
            "scaleAlphaVec": 0x5500, "bias": 0x6600, "E": 0x7700, "amaxOut": 0x8800, "amaxWS": 0x9900,
            "amaxSync": 0xAA00}
_POINTER_KEYS = {"D": "D", "C": "C", "A": "A", "B": "B", "AddressScaleA": "scaleA", "AddressScaleB": "scaleB",
                 "AddressScaleC": "scaleC", "AddressScaleD": "scaleD", "AddressScaleAlphaVec": "scaleAlphaVec",
                 "bias": "bias", "E": "E", "AddrAmaxOut": "amaxOut", "AmaxWS": "amaxWS", "AmaxSync": "amaxSync",
                 "dstD": "D", "Synchronizer": "synchronizer"}


def value_mismatches(sol: Solution, pack: Callable[..., bytes]) -> list[str]:
    """Arguments whose bytes at the kernel's offset are not the call's value (GSU 1: no workspace)."""
    pt, problem = sol.problem_type, _problem(sol)
    blob = pack(sol, problem, _BUFFERS, 1.5, -2.0, gsu=1 if splits_k(sol) else None)
    expected: dict[str, int | float] = {f"SizesFree{i}": s for i, s in enumerate(problem.free_sizes(pt))}
    expected["SizesSum0"] = problem.k
    for t in "DCAB":
        expected.update({f"stride{t}{i}": s for i, s in enumerate(problem.tensor_strides(pt, t))})
    expected.update({name: _BUFFERS[key] for name, key in _POINTER_KEYS.items()})
    out = []
    for placed in solution_layout(sol).arguments:
        name, offset = placed.argument.name, placed.offset
        if name in expected:
            fmt = "<Q" if placed.argument.size == 8 else "<I"
            got = struct.unpack_from(fmt, blob, offset)[0]
        elif name in ("alpha", "beta") and placed.argument.value_type == "f32":
            got = struct.unpack_from("<f", blob, offset)[0]
            expected[name] = 1.5 if name == "alpha" else -2.0
        else:
            continue
        if got != expected[name]:
            out.append(f"{_kind(sol)}: {name} at {offset} is {got}, the call's is {expected[name]}")
    return out


def user_struct_mismatches(sol: Solution, user_struct: Callable[..., grouped.UserStruct]) -> list[str]:
    """Fields the kernel reads from a UserArguments struct that the host writes elsewhere."""
    pt = sol.problem_type
    kernel, size = user_argument_offsets(sol)
    host = user_struct(pt)
    out = [f"{_kind(sol)}: {name} read at {off}, host writes {host.offsets.get(runtime_name(name, pt.num_indices_c))}"
           for name, off in kernel.items() if host.offsets.get(runtime_name(name, pt.num_indices_c)) != off]
    if size != host.size:
        out.append(f"{_kind(sol)}: struct of {size} bytes in the kernel, {host.size} in the host")
    return out


def record_mismatches(sol: Solution, pack: Callable[..., bytes]) -> list[str]:
    """An argType-1 record the host packs is not the size the kernel steps over."""
    got = len(pack(sol, _problem(sol), _BUFFERS, 1.0, 0.0))
    return [] if got == record_bytes(sol) else [f"{_kind(sol)}: record of {got} bytes, the kernel's {record_bytes(sol)}"]


@pytest.fixture(scope="module")
def solutions() -> list[Solution]:
    sols = representatives()
    if not sols:
        pytest.skip("no dev-set logic")
    return sols


def test_covers_every_problem_type_and_split_k_kind(solutions: list[Solution]) -> None:
    kinds = {_kind(s) for s in solutions}
    types = {s.problem_type.name for s in supported_kernels()}
    assert {k[0] for k in kinds} == types
    assert any(splits_in_kernel(s) for s in solutions) and any(splits_k(s) and not splits_in_kernel(s) for s in solutions)


def test_argtype0_layout_agrees(solutions: list[Solution]) -> None:
    assert [m for s in solutions for m in layout_mismatches(s, args.layout)] == []


def test_argtype0_values_at_kernel_offsets(solutions: list[Solution]) -> None:
    assert [m for s in solutions for m in value_mismatches(s, args.pack_kernel_args)] == []


def test_argtype1_records_agree(solutions: list[Solution]) -> None:
    assert [m for s in solutions for m in record_mismatches(s, args.pack_gemm_args)] == []


def test_argtype2_struct_agrees(solutions: list[Solution]) -> None:
    grouped_user = [s for s in solutions if s.problem_type.support_user_args]
    assert grouped_user
    assert [m for s in grouped_user for m in user_struct_mismatches(s, grouped.user_struct)] == []


# ---- the same checks against a host broken on purpose -------------------------------------------------

def _broken_named(kind: str) -> Callable[..., list[tuple[str, bytes]]]:
    real = args._named

    def named(*a: object, **k: object) -> list[tuple[str, bytes]]:
        fields = real(*a, **k)  # type: ignore[arg-type]
        if kind == "blocks":
            # C's strides packed before D's (names travel with their values)
            d = [f for f in fields if f[0].startswith("strideD")]
            c = [f for f in fields if f[0].startswith("strideC")]
            first = fields.index(d[0])
            rest = [f for f in fields if f not in d and f not in c]
            return rest[:first] + c + d + rest[first:]
        # A's and B's leading strides carry each other's values
        at = {name: i for i, (name, _) in enumerate(fields)}
        ia, ib = at["strideA1"], at["strideB1"]
        fields[ia], fields[ib] = (fields[ia][0], fields[ib][1]), (fields[ib][0], fields[ia][1])
        return fields
    return named


def _a_few(solutions: list[Solution]) -> Iterator[Solution]:
    yield from solutions[:5]


def test_broken_stride_order_fails_the_layout_check(solutions: list[Solution], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(args, "_named", _broken_named("blocks"))
    assert all(layout_mismatches(s, args.layout) for s in _a_few(solutions))
    assert all(record_mismatches(s, args.pack_gemm_args) == [] for s in _a_few(solutions))  # same size


def test_swapped_stride_values_fail_the_value_check(solutions: list[Solution], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(args, "_named", _broken_named("values"))
    assert all(layout_mismatches(s, args.layout) == [] for s in _a_few(solutions))  # the layout cannot see it
    assert all(value_mismatches(s, args.pack_kernel_args) for s in _a_few(solutions))


def test_missing_argument_fails_the_record_check(solutions: list[Solution], monkeypatch: pytest.MonkeyPatch) -> None:
    real = args._named
    monkeypatch.setattr(args, "_named", lambda *a, **k: [f for f in real(*a, **k) if f[0] != "beta"])
    assert all(record_mismatches(s, args.pack_gemm_args) for s in _a_few(solutions) if s.problem_type.use_beta)


def test_shifted_struct_field_fails_the_struct_check(solutions: list[Solution]) -> None:
    def shifted(pt: object) -> grouped.UserStruct:
        real = grouped.user_struct(pt)  # type: ignore[arg-type]
        return grouped.UserStruct({**real.offsets, "bias_type": real.offsets["strideBias"]}, real.size)

    user = [s for s in solutions if s.problem_type.support_user_args and s.problem_type.use_bias]
    assert user and all(user_struct_mismatches(s, shifted) for s in user)
