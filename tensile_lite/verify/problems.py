"""The problems each kernel is run on, sized from its macro tile and DepthU and kept inside its predicates.

Cases (each only when the solution's predicates allow it; otherwise it is dropped with a note):
- `full`: whole tiles, K a multiple of DepthU, beta 0 (C is never to be read);
- `edges`: 2-3 tiles per free dimension with partial last tiles, K with a tail, a batch of 2, padded
  leading dimensions and batch strides, beta != 0 — more workgroups than the others, so large
  kernels run only its corner, edge and one interior tile;
- `small`: less than one tile in M, just over one in N, K below DepthU (tail loop only);
- `alpha0`: alpha 0 with beta != 0 (A and B are never to be read);
- `k0`: K == 0 (D = beta C).

Split-K kernels (splitk.py) run each case with the solution's GSU, K long enough for every slice to
sum at least one DepthU block (and for GlobalSplitUCheckMinK), `edges` with one block more so the
slices are uneven and one also takes the K tail; `edges` keeps C and D packed so that edge tiles,
the tail and the batch go through the split-K reduction, while `small` pads them and so runs with
GSU 1 (the 2024 runtime addresses padded C/D packed with GSU > 1), as does `k0` (K 0 is below the minimum
K); both only when the library lets the runtime override GSU. A 7.x library's kernels get C's and D's own
strides, so there every case keeps its padding and its GSU. MultipleBuffer kernels (conversion.py) with
GSU > 1 size K the same way, but keep every case's padded C and D: the conversion kernel addresses
them at their own strides, so only K below GlobalSplitUCheckMinK runs with GSU 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from tensile_lite.host import GemmProblem
from tensile_lite.model import DataType, ProblemType
from tensile_lite.targets import get_target
from tensile_lite.verify import splitk
from tensile_lite.verify.predicates import Call, failing, present, value_of
from tensile_lite.verify.runtime_view import RuntimeSolution

# Padding (elements) added to each tensor's leading dimension; batch strides get more. Different per
# tensor so a kernel that mixes up two tensors' strides reads the wrong elements.
_PADS = {"A": 3, "B": 5, "C": 2, "D": 4}
# The GSU a user's override asks of a GSU-1 MultipleBuffer solution whose library allows one.
OVERRIDE_GSU = 2


@attrs.frozen(slots=True)
class Case:
    name: str
    problem: GemmProblem
    alpha: float
    beta: float
    gsu: int | None = None  # the GSU a split-K kernel is launched with (None: not a split-K kernel)

    @property
    def launch_gsu(self) -> int:
        return self.gsu or 1

    def describe(self) -> str:
        p = self.problem
        text = f"{self.name}: M={p.m} N={p.n} K={p.k} batch={p.batch} alpha={self.alpha:g} beta={self.beta:g}"
        if self.gsu is not None:
            text += f" GSU={self.gsu}"
        if p.strides_a is not None:
            text += " (padded strides)" if p.strides_d is not None else " (padded A/B strides)"
        return text


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple if multiple > 1 else value


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, int) and value > 0 else default


def _remainder(tile: int, multiple: int, want: int) -> int | None:
    """A remainder near `want`, a multiple of `multiple`, strictly between 0 and `tile` (None: none exists)."""
    r = _round_up(max(want, 1), multiple)
    if r >= tile:
        r = (tile - 1) // multiple * multiple
    return r if r > 0 else None


def padded(pt: ProblemType, problem: GemmProblem, *, same_cd: bool, pad_cd: bool = True) -> GemmProblem:
    """`problem` with every tensor's leading dimension padded and gaps between batches (A and B only,
    when not `pad_cd`)."""

    def strides(tensor: str) -> tuple[int, ...]:
        assign = {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(
            tensor, tuple(range(pt.num_indices_c)))
        pad = _PADS["C" if same_cd and tensor == "D" else tensor]
        out, running = [], 1
        for pos, index in enumerate(assign[:-1]):
            running = running * max(problem.index_size(pt, index), 1) + (pad if pos == 0 else 2 * pad + 1)
            out.append(running)
        return tuple(out)

    if not pad_cd:
        return attrs.evolve(problem, strides_a=strides("A"), strides_b=strides("B"))
    return attrs.evolve(problem, strides_a=strides("A"), strides_b=strides("B"), strides_c=strides("C"),
                        strides_d=strides("D"))


def _scalars(pt: ProblemType) -> dict[str, tuple[float, float]]:
    """(alpha, beta) per case: exact in the compute type (integers for integer compute)."""
    if pt.compute_type in (DataType.I, DataType.I8):
        return {"full": (1, 0), "edges": (-2, 3), "small": (3, -1), "alpha0": (0, 2), "k0": (1, -2),
                "override": (2, -1)}
    return {"full": (1.0, 0.0), "edges": (-0.75, 0.5), "small": (1.25, -1.0), "alpha0": (0.0, 1.5),
            "k0": (1.0, -0.5), "override": (0.5, -1.25)}


def device_cu_count(rs: RuntimeSolution) -> int:
    """The CU count of the device the verifier stands for (the target's common part, as runtime_args
    fills a WGMXCCG of -1 with it)."""
    return get_target(rs.solution.arch).default_cu_count or 0


def cases(rs: RuntimeSolution, predicate: Mapping[str, Any] | None) -> tuple[list[Case], list[str]]:
    """The cases for one kernel, and notes on what could not be covered and why."""
    pt, sol = rs.problem_type, rs.solution
    mt0, mt1 = sol.macro_tile
    du = sol.depth_u
    m_mult = _int(value_of(predicate, "Free0SizeMultiple"), 1)
    n_mult = _int(value_of(predicate, "Free1SizeMultiple"), 1)
    k_mult = _int(value_of(predicate, "BoundSizeMultiple"), 1)
    m_min = _int(value_of(predicate, "LeadingFree0SizesGreaterOrEqual"), 1)
    n_min = _int(value_of(predicate, "LeadingFree1SizesGreaterOrEqual"), 1)
    batched = pt.num_indices_c == 3
    batch = _int(value_of(predicate, "BatchSizeEqual"), 2 if batched else 1)
    notes: list[str] = []

    def m(v: int) -> int:
        return _round_up(max(v, m_min), m_mult)

    def n(v: int) -> int:
        return _round_up(max(v, n_min), n_mult)

    def k(v: int) -> int:
        return _round_up(v, k_mult)

    r0 = _remainder(mt0, m_mult, 5)
    r1 = _remainder(mt1, n_mult, mt1 - 3)
    if r0 is None:
        notes.append(f"no edge tiles in M: M must be a multiple of {m_mult} with macro tile {mt0}")
    if r1 is None:
        notes.append(f"no edge tiles in N: N must be a multiple of {n_mult} with macro tile {mt1}")
    tail = _remainder(du, k_mult, 3)
    if tail is None:
        notes.append(f"no K tail: K must be a multiple of {k_mult} with DepthU {du}")
    zero_beta = not pt.use_beta or present(predicate, "BetaZero")
    scalars = _scalars(pt)
    gsu = sol.runtime.global_split_u
    # the kernel splits K at the solution's GSU (in-kernel, or into the runtime's conversion kernel)
    split = (rs.split_k or rs.multiple_buffer) and gsu > 1
    # the 2024 runtime's in-kernel split-K addresses C and D packed whatever their strides (§5.4, §7 #8),
    # 7.x's passes their own (docs/rocm7_kernel_args.md); the conversion kernel of MultipleBuffer reads C
    # and writes D at their own strides
    packed_only = split and rs.split_k and not rs.own_split_strides
    override = splitk.overridable(rs)
    # a GSU-1 MultipleBuffer kernel that takes the runtime's GSU: one case runs with a user's override
    override_mb = rs.multiple_buffer and gsu == 1 and override
    cu = device_cu_count(rs)
    # split-K: enough DepthU blocks for every slice, and K at least GlobalSplitUCheckMinK's GSU x min K
    min_k = value_of(predicate, "GlobalSplitUCheckMinK")
    min_k = int(min_k[0]) if isinstance(min_k, (list, tuple)) and min_k else 0
    blocks = max(2, gsu, -(-min_k * gsu // du)) if split else 2
    # override: edges' shape with one block more than OVERRIDE_GSU slices share evenly, K enough for
    # GlobalSplitUCheckMinK at that GSU
    override_blocks = max(2, OVERRIDE_GSU, -(-min_k * OVERRIDE_GSU // du)) + 1
    at_gsu1: dict[str, str] = {}

    def gsu_for(name: str, problem: GemmProblem, beta: float) -> int | None:
        if override_mb:
            return OVERRIDE_GSU if name == "override" else None
        if not (rs.split_k or split):
            return None
        if not split or not override:
            return gsu
        if packed_only and not splitk.packed_cd(pt, problem):
            at_gsu1[name] = "padded C/D"
            return 1
        if "GlobalSplitUCheckMinK" in failing(predicate, Call(pt, problem, beta, gsu, cu)):
            at_gsu1[name] = "K below GlobalSplitUCheckMinK"
            return 1
        return gsu

    def case(name: str, problem: GemmProblem, pad: bool = False, pad_cd: bool = True) -> Case:
        alpha, beta = scalars[name]
        if zero_beta:
            beta = 0.0
        if pad:
            problem = padded(pt, problem, same_cd=present(predicate, "CDStridesEqual"), pad_cd=pad_cd)
        return Case(name, problem, alpha, beta, gsu_for(name, problem, beta))

    out = [
        case("full", GemmProblem(m(2 * mt0), n(2 * mt1), k(blocks * du), 1)),
        # split-K: one block more than the slices share evenly, C and D packed so GSU > 1 runs
        case("edges", GemmProblem(m(2 * mt0 + (r0 or 0)), n(2 * mt1 + (r1 or 0)),
                                  k((blocks + int(split)) * du + (tail or 0)), batch), pad=True, pad_cd=not packed_only),
        # a split-K kernel runs this one with GSU 1 when the runtime can override GSU (padded C/D)
        case("small", GemmProblem(m(mt0 - (r0 or 0)), n(mt1 + (r1 or 0)), k(max(du // 2 + (tail or 0), 1)), 1),
             pad=True, pad_cd=not packed_only or override),
        case("alpha0", GemmProblem(m(mt0 + (r0 or 0)), n(mt1), k((blocks if split else 1) * du + (tail or 0)), 1)),
        case("k0", GemmProblem(m(mt0), n(mt1 + (r1 or 0)), 0, batch)),
    ]
    if override_mb:
        out.append(case("override", GemmProblem(m(2 * mt0 + (r0 or 0)), n(2 * mt1 + (r1 or 0)),
                                                k(override_blocks * du + (tail or 0)), batch), pad=True))
        notes.append(f"case override runs with a user's GSU override of {OVERRIDE_GSU} (slices for the conversion"
                     " kernel)")
    if zero_beta:
        notes.append("the solution takes only beta == 0: every case has beta 0")
    if split and not override:
        notes.append(f"the library does not let the runtime override GSU: every case runs with GSU {gsu}"
                     + (" and C/D packed" if packed_only else ""))
    kept = []
    for c in out:
        bad = failing(predicate, Call(pt, c.problem, c.beta, c.launch_gsu, cu)) if predicate else []
        if bad:
            notes.append(f"case {c.name} dropped: the problem fails {', '.join(bad)}")
        else:
            kept.append(c)
    ran = {c.name for c in kept}
    for reason in dict.fromkeys(at_gsu1.values()):
        names = [name for name, why in at_gsu1.items() if why == reason and name in ran]
        if not names:
            continue
        notes.append(f"case{'s' if len(names) > 1 else ''} {', '.join(names)} ran with GSU 1 ({reason}"
                     + (": with GSU > 1 upstream addresses C and D packed, spec/epilogue_semantics.md §5.4, §7 #8)"
                        if reason == "padded C/D" else ")"))
    return kept, notes
