"""Run a generated GEMM kernel on the emulator and compare it with a float64 numpy reference.

The inputs are quantised to their element type first and the reference is computed from exactly
those values. Padding around every tensor (between leading dimensions, between batches) is filled
with NaN, and D starts as NaN everywhere: a kernel that reads anything outside the problem, reads C
when beta is 0, or writes outside M x N x batch fails the comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from tensile_lite.asm.gemm import generate, kernel_name, postgsu
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu import DeviceMemory, Emulator
from tensile_lite.emu.arch import arch_info
from tensile_lite.host import (
    ARG_TYPE_TABLE,
    EpilogueArgs,
    GemmProblem,
    is_multiple_buffer,
    launch_grid,
    num_workgroups,
    pack_grouped,
    pack_kernel_args,
    runtime_gsu,
    tiles,
)
from tensile_lite.host import conversion as host_conversion
from tensile_lite.model import DataType, ProblemType, Solution
from tests.gemm.bits import bits_dtype, from_bits, nan_bits, to_bits
from tests.gemm.epilogue_ref import Epilogue, Vectors, activate
from tests.gemm.splitk_buffers import launch_gsu, with_split_k_buffers


@attrs.frozen
class Built:
    solution: Solution
    name: str
    path: Path
    # for MultipleBuffer split-K: where the runtime's conversion kernels are built, and those built
    toolchain: Toolchain | None = attrs.field(default=None, eq=False, repr=False)
    conversions: dict[str, Emulator] = attrs.field(factory=dict, eq=False, repr=False)

    def conversion(self, kernel: host_conversion.ConversionKernelName) -> Emulator:
        """An emulator of the conversion kernel the runtime names `kernel` (built on first use, beside
        the GEMM kernel)."""
        variant = postgsu.Variant(self.solution.problem_type, kernel.bias_type, kernel.gsu_bucket, kernel.vw,
                                  kernel.name)
        emu = self.conversions.get(variant.name)
        if emu is None:
            assert self.toolchain is not None
            text = postgsu.generate(self.solution.arch, variant)
            obj, co = self.path.with_name(f"{variant.name}.o"), self.path.with_name(f"{variant.name}.co")
            assemble(self.toolchain, text, self.solution.arch, obj)
            link(self.toolchain, [obj], co)
            obj.unlink()
            emu = self.conversions[variant.name] = Emulator(co)
        return emu


def build(toolchain: Toolchain, sol: Solution, out_dir: Path) -> Built:
    name = kernel_name(sol)
    text = generate(sol, name)
    obj = out_dir / f"{name}.o"
    co = out_dir / f"{name}.co"
    assemble(toolchain, text, sol.arch, obj)
    link(toolchain, [obj], co)
    obj.unlink()
    return Built(sol, name, co, toolchain)


def _assignments(pt: ProblemType, tensor: str) -> tuple[int, ...]:
    return {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(tensor, tuple(range(pt.num_indices_c)))


def _tensor(pt: ProblemType, problem: GemmProblem, tensor: str, rng: np.random.Generator, dt: DataType,
            fill: str, fp8: str = "fnuz") -> tuple[np.ndarray, np.ndarray]:
    """(flat bit buffer with NaN padding, float64 values indexed [i or l, j or l, batch] by index)."""
    assign = _assignments(pt, tensor)
    strides = (1, *problem.tensor_strides(pt, tensor))
    sizes = [problem.index_size(pt, i) for i in assign]
    count = max(problem.tensor_elements(pt, tensor), 1)
    flat = np.full(count, nan_bits(dt, fp8), dtype=bits_dtype(dt))
    if fill == "random" and dt.is_integral:
        vals = rng.integers(-12, 13, size=sizes).astype(np.float64)
    elif fill == "random":
        vals = rng.integers(-8, 9, size=sizes).astype(np.float64) / 8.0 + rng.uniform(-0.05, 0.05, size=sizes)
    else:
        vals = np.full(sizes, np.nan)
    bits = to_bits(vals, dt, fp8) if fill == "random" else np.full(sizes, nan_bits(dt, fp8), bits_dtype(dt))
    if all(s > 0 for s in sizes):
        idx = np.zeros(sizes, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
            shape = [1] * len(sizes)
            shape[axis] = size
            idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
        flat[idx.reshape(-1)] = bits.reshape(-1)
    return flat, from_bits(bits, dt, fp8) if fill == "random" else vals


def _reference(pt: ProblemType, a: np.ndarray, b: np.ndarray, problem: GemmProblem) -> tuple[np.ndarray, np.ndarray]:
    """(A x B, |A| x |B|) as [i, j, batch] in float64 from the values as indexed by each tensor's
    assignments (the second bounds the accumulation error)."""
    batch = -1  # label of the batch axis; problems without one get a unit axis

    def canon(x: np.ndarray, assign: tuple[int, ...], order: tuple[int, ...]) -> np.ndarray:
        assign = tuple(batch if i == 2 and pt.num_indices_c == 3 else i for i in assign)
        if len(assign) == 2:
            x = x[..., None]
            assign = (*assign, batch)
        return np.transpose(x, [assign.index(i) for i in order])

    lidx = pt.indices_summation[-1]
    a3 = canon(a, pt.index_assignments_a, (0, lidx, batch))   # [m, k, batch]
    b3 = canon(b, pt.index_assignments_b, (lidx, 1, batch))   # [k, n, batch]
    shape = (problem.m, problem.n, problem.batch if pt.num_indices_c == 3 else 1)
    if not problem.k:
        return np.zeros(shape), np.zeros(shape)
    return np.einsum("ikb,kjb->ijb", a3, b3), np.einsum("ikb,kjb->ijb", np.abs(a3), np.abs(b3))


def emulator_for(built: Built) -> Emulator:
    return Emulator(built.path)


@attrs.frozen
class Result:
    got: np.ndarray        # D as computed, float64 [m, n, batch]
    want: np.ndarray       # reference, exact
    tolerance: np.ndarray  # per element
    untouched: bool        # nothing outside M x N x batch was written
    instructions: int
    dest: DataType
    fp8: str = "fnuz"      # the target's 8-bit float encoding (for fp8/bf8 D)
    # OutputAmaxD: (written, reference, tolerance) of max |D before scaleD|, else None
    amax: tuple[float, float, float] | None = None
    # UseE: (E as written [m, n, batch], reference, tolerance, nothing outside E's elements written)
    e: tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None = None

    @property
    def rounded(self) -> np.ndarray:
        """The reference rounded to the destination type (RNE; overflow gives inf)."""
        with np.errstate(over="ignore"):
            return from_bits(to_bits(self.want, self.dest, self.fp8), self.dest, self.fp8)

    def _fail(self, bad: np.ndarray, want: np.ndarray) -> None:
        if bad.any():
            where = np.argwhere(bad)[:5]
            detail = ", ".join(f"{tuple(w)}: got {self.got[tuple(w)]!r} want {want[tuple(w)]!r}" for w in where)
            raise AssertionError(f"{int(bad.sum())} of {bad.size} elements differ: {detail}")

    def check(self) -> None:
        """Within the error bound of every element (or equal to the rounded reference, for infinities),
        and the amax of D within its bound."""
        assert self.untouched, "the kernel wrote D outside the problem"
        self._fail(~((np.abs(self.got - self.want) <= self.tolerance) | (self.got == self.rounded)), self.want)
        self.check_amax()
        self.check_e()

    def check_e(self) -> None:
        if self.e is not None:
            got, want, tol, untouched = self.e
            assert untouched, "the kernel wrote E outside the problem"
            bad = ~((np.abs(got - want) <= tol) | (np.isinf(want) & (got == want)))
            if bad.any():
                w = tuple(np.argwhere(bad)[0])
                raise AssertionError(f"E: {int(bad.sum())} of {bad.size} elements differ: {w}: got {got[w]!r} "
                                     f"want {want[w]!r}")

    def check_amax(self) -> None:
        if self.amax is not None:
            got, want, tol = self.amax
            assert abs(got - want) <= tol, f"amax of D: got {got!r}, want {want!r} (tolerance {tol:.3g})"

    def check_exact(self) -> None:
        """Bit for bit the reference rounded once to the destination type (for problems whose f32
        result is exact, this checks the conversion's rounding and overflow)."""
        assert self.untouched, "the kernel wrote D outside the problem"
        self._fail(self.got != self.rounded, self.rounded)


def _f32(x: float) -> float:
    return float(np.float32(x))


@attrs.frozen
class _Call:
    """One GEMM's device buffers and the values the reference needs."""

    problem: GemmProblem
    alpha: float
    beta: float
    epilogue: Epilogue
    inputs: dict
    vectors: Vectors
    buffers: dict
    e_strides: tuple[int, ...] = ()   # UseE: E's strides (its own padding, unlike D's)
    e_flat: np.ndarray | None = None  # ... and its buffer's initial contents


AMAX_POISON = 0x7149F2CA  # 1e30 as f32: a partial nobody wrote wins the max and fails the check
AMAX_SYNC_DWORDS = 64     # counters: one per GEMM of a launch


def _amax_buffers(sol: Solution, problem: GemmProblem, mem: DeviceMemory) -> dict[str, int]:
    """AmaxD's output (NaN until written), its workspace as the host sizes it (a f32 per workgroup,
    poisoned) and zeroed counters."""
    groups = max(num_workgroups(sol, problem, gsu=1), 1)
    return {"amaxOut": mem.alloc(np.full(1, nan_bits(DataType.S), np.uint32)),
            "amaxWS": mem.alloc(np.full(groups, AMAX_POISON, np.uint32)),
            "amaxSync": mem.alloc(np.zeros(AMAX_SYNC_DWORDS, np.uint32))}


def fp8_encoding(sol: Solution) -> str:
    """How the target encodes fp8/bf8 elements ("fnuz" on gfx94x, "ocp" on gfx950)."""
    return arch_info(sol.arch).fp8 or "fnuz"


def operand_types(pt: ProblemType) -> tuple[DataType, DataType]:
    """A's and B's element types (the mixed 8-bit DataTypes name both)."""
    return pt.a_type.operand_types[0], pt.b_type.operand_types[1]


def _prepare(pt: ProblemType, mem: DeviceMemory, problem: GemmProblem, alpha: float, beta: float,
             ep: Epilogue | None, rng: np.random.Generator, fp8: str = "fnuz") -> _Call:
    ep = ep or Epilogue()
    inputs = _inputs(pt, problem, rng, alpha, beta, fp8)
    buffers = {name: mem.alloc(flat) for name, (flat, _) in inputs.items()}
    vectors = ep.vectors_for(pt, problem, rng)
    for name, flat in vectors.buffers.items():
        buffers[name] = mem.alloc(flat)
    return _Call(problem, alpha, beta, ep, inputs, vectors, buffers)


def _with_amax(sol: Solution, call: _Call, mem: DeviceMemory) -> _Call:
    """The extra outputs of the problem type: amax buffers (OutputAmaxD), and E (UseE) NaN-filled
    with strides of its own, 5 more elements per column than M and 7 more between batches."""
    pt = sol.problem_type
    if pt.output_amax_d:
        call = attrs.evolve(call, buffers={**call.buffers, **_amax_buffers(sol, call.problem, mem)})
    if pt.use_e:
        p = call.problem
        ld = p.m + 5
        strides = (ld, ld * p.n + 7)[:pt.num_indices_c - 1]
        batch = p.batch if pt.num_indices_c == 3 else 1
        size = max(1, strides[-1] * batch if len(strides) > 1 else ld * p.n)
        flat = np.full(size, nan_bits(pt.e_type), bits_dtype(pt.e_type))
        call = attrs.evolve(call, buffers={**call.buffers, "E": mem.alloc(flat)}, e_strides=strides, e_flat=flat)
    return call


def _epilogue_args(pt: ProblemType, call: _Call) -> EpilogueArgs:
    return attrs.evolve(call.epilogue.arguments(pt), strides_e=call.e_strides)


def _read_e(pt: ProblemType, call: _Call, mem: DeviceMemory) -> tuple[np.ndarray, bool]:
    """E at the problem's elements [m, n, batch], and whether everything else is untouched."""
    assert call.e_flat is not None
    p = call.problem
    out = mem.array(call.buffers["E"], bits_dtype(pt.e_type), call.e_flat.size)
    batch = p.batch if pt.num_indices_c == 3 else 1
    ld = call.e_strides[0]
    bstride = call.e_strides[1] if len(call.e_strides) > 1 else 0
    idx = (np.arange(p.m)[:, None, None] + ld * np.arange(p.n)[None, :, None]
           + bstride * np.arange(batch)[None, None, :])
    outside = np.ones(out.size, dtype=bool)
    outside[idx.reshape(-1)] = False
    return from_bits(out[idx], pt.e_type), bool(np.all(out[outside] == call.e_flat[outside]))


def _result(sol: Solution, mem: DeviceMemory, call: _Call, instructions: int, *, amax_written: bool = True) -> Result:
    pt = sol.problem_type
    got, untouched = _read_d(pt, call.problem, mem, call.buffers["D"], call.inputs["D"][0], fp8_encoding(sol))
    ref = reference(pt, call.problem, call.inputs, call.alpha, call.beta, call.epilogue, call.vectors,
                    flush_f16=arch_info(sol.arch).mfma_flushes_f16_denorms)
    want, tol, pre_d, pre_err = ref.d, ref.d_err, ref.pre_d, ref.pre_d_err
    e = None
    if pt.use_e:
        e_got, e_untouched = _read_e(pt, call, mem)
        e = (e_got, ref.e, ref.e_err, e_untouched)
    amax = None
    if pt.output_amax_d and amax_written:
        got_amax = float(mem.array(call.buffers["amaxOut"], np.float32, 1)[0])
        # the kernel's max drops NaN elements; an empty or all-NaN D gives 0
        finite = np.abs(pre_d[~np.isnan(pre_d)])
        want_amax = float(finite.max()) if finite.size else 0.0
        tol_amax = float(pre_err[~np.isnan(pre_d)].max()) if finite.size else 0.0
        amax = (got_amax, want_amax, tol_amax)
    return Result(got, want, tol, untouched, instructions, pt.dest_type, fp8_encoding(sol), amax, e)


def run(built: Built, problem: GemmProblem, *, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
        emulator: Emulator | None = None, gemm_count: int = 1, arg_type: int = 0,
        epilogue: Epilogue | None = None, gsu: int | None = None) -> Result:
    """One argType-0 launch of `built` on `problem` (the header may claim another gemm_count/argType);
    `gsu` overrides the solution's, as a user may at run time."""
    sol = built.solution
    pt = sol.problem_type
    mem = DeviceMemory()
    call = _with_amax(sol, _prepare(pt, mem, problem, alpha, beta, epilogue, np.random.default_rng(seed),
                                    fp8_encoding(sol)), mem)
    gsu = gsu if gsu is not None else launch_gsu(sol, problem)
    buffers = with_split_k_buffers(sol, problem, mem, call.buffers, gsu)
    kernargs = pack_kernel_args(sol, problem, buffers, alpha, beta, gemm_count=gemm_count, arg_type=arg_type,
                                epilogue=_epilogue_args(pt, call), gsu=gsu)
    emu = emulator or emulator_for(built)
    grid = num_workgroups(sol, problem, gsu=gsu)
    stats = emu.launch(built.name, grid=launch_grid(sol, problem, gsu=gsu), block=(sol.num_threads, 1, 1),
                       kernargs=kernargs, memory=mem) if grid else None
    instructions = stats.instructions if stats else 0
    split = runtime_gsu(sol, gsu)
    if is_multiple_buffer(sol) and split > 1 and grid:
        instructions += _convert(built, problem, call, buffers, split, mem)
    return _result(sol, mem, call, instructions)


def _convert(built: Built, problem: GemmProblem, call: _Call, buffers: dict[str, int], gsu: int,
             mem: DeviceMemory) -> int:
    """The runtime's second launch of a MultipleBuffer split-K call: the conversion kernel over D."""
    pt = built.solution.problem_type
    feat = epilogue_features(pt)
    ep = call.epilogue
    bias_type = (ep.bias_type or ep.bias or feat.bias_types[0]) if feat.bias_read else None
    vw = host_conversion.launch_vector_width(pt, [problem])
    variant = _conversion_kernel(pt, bias_type, gsu, vw)
    args = _epilogue_args(pt, call)
    conv = host_conversion.ConversionCall(problem, buffers, call.alpha, call.beta, gsu, strides_e=call.e_strides,
                                  stride_bias=args.stride_bias, factor_dim=args.factor_dim,
                                  activation=args.activation, activation_args=args.activation_args)
    kernargs = host_conversion.pack_call(pt, conv)
    stats = built.conversion(variant).launch(
        variant.name, grid=(host_conversion.work_groups(pt, problem, vw), 1, 1),
        block=(host_conversion.THREADS, 1, 1), kernargs=kernargs, memory=mem)
    return stats.instructions


def _conversion_kernel(pt: ProblemType, bias_type: DataType | None, gsu: int,
                       vw: int) -> host_conversion.ConversionKernelName:
    bucket = host_conversion.bucket(gsu)
    return host_conversion.ConversionKernelName(bias_type, bucket, vw,
                                                host_conversion.conversion_name(pt, bias_type, bucket, vw))


def run_grouped(built: Built, problems: list[GemmProblem], *, arg_type: int, alphas: list[float],
                betas: list[float], epilogues: list[Epilogue | None] | None = None, seed: int = 0,
                emulator: Emulator | None = None) -> list[Result]:
    """One grouped launch (argType 1: the library's table, 2: user arguments) over `problems`."""
    sol = built.solution
    pt = sol.problem_type
    mem = DeviceMemory()
    rng = np.random.default_rng(seed)
    eps = epilogues or [None] * len(problems)
    calls = [_with_amax(sol, _prepare(pt, mem, p, a, b, ep, rng, fp8_encoding(sol)), mem)
             for p, a, b, ep in zip(problems, alphas, betas, eps, strict=True)]
    table_address = mem.alloc(1 << 16)
    buffers_of = [with_split_k_buffers(sol, p, mem, c.buffers) for p, c in zip(problems, calls, strict=True)]
    kernargs, table = pack_grouped(sol, problems, buffers_of, alphas, betas,
                                   table_address=table_address, arg_type=arg_type,
                                   epilogues=[_epilogue_args(pt, c) for c in calls])
    assert len(table) <= 1 << 16
    mem.write(table_address, table)
    grid = sum(tiles(sol, p) for p in problems)
    emu = emulator or emulator_for(built)
    stats = emu.launch(built.name, grid=(max(grid, 1), 1, 1), block=(sol.num_threads, 1, 1), kernargs=kernargs,
                       memory=mem) if grid else None
    instructions = stats.instructions if stats else 0
    gsu = sol.runtime.global_split_u
    if is_multiple_buffer(sol) and gsu > 1 and arg_type == ARG_TYPE_TABLE and grid:
        instructions += _convert_grouped(built, problems, calls, buffers_of, gsu, mem)
    # hipBLASLt's user arguments carry no amax output (amax.py): only argType 1 writes one
    return [_result(sol, mem, c, instructions, amax_written=arg_type == 1) for c in calls]


def _convert_grouped(built: Built, problems: list[GemmProblem], calls: list[_Call], buffers: list[dict[str, int]],
                     gsu: int, mem: DeviceMemory) -> int:
    """The grouped conversion launch (`_GG` kernel) after a MultipleBuffer argType-1 launch."""
    pt = built.solution.problem_type
    feat = epilogue_features(pt)
    vw = host_conversion.launch_vector_width(pt, problems)
    first = calls[0].epilogue
    bias_type = (first.bias_type or first.bias or feat.bias_types[0]) if feat.bias_read else None
    variant = _conversion_kernel(pt, bias_type, gsu, vw)
    convs = []
    for call, bufs in zip(calls, buffers, strict=True):
        args = _epilogue_args(pt, call)
        convs.append(host_conversion.ConversionCall(
            call.problem, bufs, call.alpha, call.beta, gsu, strides_e=call.e_strides, stride_bias=args.stride_bias,
            factor_dim=args.factor_dim, activation=args.activation, activation_args=args.activation_args))
    table_address = mem.alloc(1 << 16)
    kernargs, table = host_conversion.pack_grouped(pt, convs, vw, table_address)
    mem.write(table_address, table)
    groups = sum(host_conversion.work_groups(pt, p, vw) for p in problems)
    stats = built.conversion(variant).launch(variant.name, grid=(max(groups, 1), 1, 1),
                                             block=(host_conversion.THREADS, 1, 1), kernargs=kernargs, memory=mem)
    return stats.instructions


def _inputs(pt: ProblemType, problem: GemmProblem, rng: np.random.Generator, alpha: float,
            beta: float, fp8: str = "fnuz") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Flat bit buffers and values of A, B, C, D (D all NaN; C all NaN when beta is 0, A and B
    when alpha is 0, so a kernel reading what it must not fails)."""
    a_type, b_type = operand_types(pt)
    a_flat, a = _tensor(pt, problem, "A", rng, a_type, "random", fp8)
    b_flat, b = _tensor(pt, problem, "B", rng, b_type, "random", fp8)
    if alpha == 0:
        a_flat[:] = nan_bits(a_type, fp8)
        b_flat[:] = nan_bits(b_type, fp8)
    c_flat, c = _tensor(pt, problem, "C", rng, pt.dest_type, "random" if beta != 0 else "nan", fp8)
    d_flat, d = _tensor(pt, problem, "D", rng, pt.dest_type, "nan", fp8)
    return {"A": (a_flat, a), "B": (b_flat, b), "C": (c_flat, c), "D": (d_flat, d)}


def _read_d(pt: ProblemType, problem: GemmProblem, mem: DeviceMemory, address: int,
            d_flat: np.ndarray, fp8: str = "fnuz") -> tuple[np.ndarray, bool]:
    """D values at the problem's elements [m, n, batch], and whether everything else is untouched."""
    d_out = mem.array(address, bits_dtype(pt.dest_type), d_flat.size)
    assign = _assignments(pt, "D")
    strides = (1, *problem.tensor_strides(pt, "D"))
    sizes = [problem.index_size(pt, i) for i in assign]
    idx = np.zeros(sizes, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[axis] = size
        idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    got = from_bits(d_out[idx], pt.dest_type, fp8)
    outside = np.ones(d_flat.size, dtype=bool)
    outside[idx.reshape(-1)] = False
    untouched = bool(np.all(d_out[outside] == d_flat[outside]))
    return (got if got.ndim == 3 else got[..., None]), untouched


@attrs.frozen
class Reference:
    """Reference values (float64, [m, n, batch]) and per-element error bounds."""

    d: np.ndarray
    d_err: np.ndarray
    pre_d: np.ndarray      # before scaleD (what OutputAmaxD takes the max of)
    pre_d_err: np.ndarray
    e: np.ndarray          # after the bias, before the activation (UseE)
    e_err: np.ndarray


_OUT_EPS = {DataType.S: 2.0 ** -24, DataType.H: 2.0 ** -11, DataType.B: 2.0 ** -8, DataType.F8: 2.0 ** -4,
            DataType.B8: 2.0 ** -3, DataType.I: 0.0, DataType.I8: 0.0}
# (fp8/bf8: the larger of the FNUZ and OCP smallest subnormals)
_OUT_MIN = {DataType.S: 2.0 ** -149, DataType.H: 2.0 ** -24, DataType.B: 2.0 ** -133, DataType.F8: 2.0 ** -9,
            DataType.B8: 2.0 ** -16, DataType.I: 0.0, DataType.I8: 0.0}


def reference(pt: ProblemType, problem: GemmProblem, inputs: dict[str, tuple[np.ndarray, np.ndarray]],
              alpha: float, beta: float, ep: Epilogue, vectors: Vectors, *,
              flush_f16: bool = False) -> Reference:
    """D in float64 following the epilogue's steps and a per-element bound of the kernel's error,
    with the intermediate values OutputAmaxD and UseE take.

    The scalars are combined in f32 exactly as the kernel does; every other step is exact here and
    its f32 rounding goes into the bound (2^-24 relative per step), which the activation scales by
    its slope and widens for its approximate exp/rcp.
    """
    feat = epilogue_features(pt)
    if pt.compute_type is DataType.I:
        # integer alpha/beta are packed truncated (host.values.scalar)
        alpha, beta = float(int(alpha)), float(int(beta))
    a, b = inputs["A"][1], inputs["B"][1]
    if flush_f16:
        # CDNA2's f16 MFMAs read subnormal inputs as zero (the emulator models it)
        a, b = (np.where(np.abs(x) < 2.0 ** -14, 0.0, x) if dt is DataType.H else x
                for x, dt in ((a, pt.a_type), (b, pt.b_type)))
    prod, mag = _reference(pt, a, b, problem)
    if pt.compute_type is DataType.I:
        return _integer_reference(pt, prod, inputs, alpha, beta, ep, vectors)
    k = max(problem.k, 1)
    alpha_p, beta_p = alpha, beta
    if feat.scale_ab == "Scalar":
        alpha_p = _f32(_f32(alpha * (1.0 if ep.scale_a is None else ep.scale_a))
                       * (1.0 if ep.scale_b is None else ep.scale_b))
    if feat.scale_cd and pt.use_beta:
        beta_p = _f32(beta * (1.0 if ep.scale_c is None else ep.scale_c))
    ulp = 2.0 ** -24
    t = alpha_p * prod
    # f32 accumulation; xf32 MFMAs also round each input to 10 mantissa bits (2^-11 relative)
    input_eps = 2.0 ** -10 * 1.01 if pt.data_type is DataType.S and pt.f32_xdl_math_op is DataType.X else 0.0
    err = abs(alpha_p) * mag * (k * 2.0 ** -23 + input_eps) + np.abs(t) * ulp
    for name in ("scaleA", "scaleB", "scaleAlphaVec"):
        if name in vectors.along:
            v = vectors.along[name]
            t = t * v
            err = err * np.abs(v) + np.abs(t) * ulp
    if pt.use_beta and beta_p != 0:
        c = inputs["C"][1]
        c = c if c.ndim == 3 else c[..., None]
        t = t + beta_p * c
        err = err + np.abs(beta_p * c) * ulp + np.abs(t) * ulp
    if "bias" in vectors.along:
        t = t + vectors.along["bias"]
        err = err + np.abs(t) * ulp
    # E's bound: the kernel's error so far plus E's one rounding (compared with the exact value)
    e_val = t
    e_err = err + np.abs(t) * _OUT_EPS.get(pt.e_type, 0.0) * 1.01 + _OUT_MIN.get(pt.e_type, 0.0)
    if feat.activation != "none":
        t, err = activate(ep.activation, ep.activation_args, t, err)
    pre_d, pre_err = t, err
    if feat.scale_cd:
        sd = 1.0 if ep.scale_d is None else ep.scale_d
        t = t * sd
        err = err * abs(sd) + np.abs(t) * ulp
    # one rounding to the destination type, plus half a unit in the last place of its subnormals
    out_eps, out_min = _OUT_EPS[pt.dest_type], _OUT_MIN[pt.dest_type]
    return Reference(t, err + np.abs(t) * out_eps * 1.01 + out_min, pre_d, pre_err, e_val, e_err)


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + 2 ** 31) % 2 ** 32) - 2 ** 31


def _integer_reference(pt: ProblemType, prod: np.ndarray, inputs: dict[str, tuple[np.ndarray, np.ndarray]],
                       alpha: float, beta: float, ep: Epilogue, vectors: Vectors) -> Reference:
    """int32 compute, exactly: every step wraps to 32 bits, as the kernel's v_mul_lo_u32 / v_add_u32."""
    t = _wrap32(_wrap32(np.rint(prod).astype(np.int64)) * int(alpha))
    if "scaleAlphaVec" in vectors.along:
        t = _wrap32(t * vectors.along["scaleAlphaVec"].astype(np.int64))
    if pt.use_beta and beta != 0:
        c = inputs["C"][1]
        c = (c if c.ndim == 3 else c[..., None]).astype(np.int64)
        t = _wrap32(t + _wrap32(int(beta) * c))
    a, b = (int(x) for x in ep.activation_args)
    if ep.activation == "relu":
        t = np.maximum(t, 0)
    elif ep.activation == "abs":
        t = _wrap32(np.maximum(-t, t))
    elif ep.activation == "leakyrelu":
        t = np.where(t >= 0, t, _wrap32(a * t))
    elif ep.activation == "clippedrelu":
        t = np.where(t > a, np.minimum(b, t), 0)
    elif ep.activation != "none":
        raise ValueError(f"{ep.activation} has no int32 form")
    out = t.astype(np.float64)
    zero = np.zeros_like(out)
    return Reference(out, zero, out, zero, out, zero)


def padded(pt: ProblemType, m: int, n: int, k: int, batch: int = 1, pad: int = 3) -> GemmProblem:
    """A problem whose tensors have `pad` extra elements per leading dimension and more between
    batches, so that every tensor has NaN-filled gaps a kernel must never read."""
    base = GemmProblem(m, n, k, batch)

    def strides(tensor: str) -> tuple[int, ...]:
        out, running = [], 1
        for pos, idx in enumerate(_assignments(pt, tensor)[:-1]):
            running = running * max(base.index_size(pt, idx), 1) + (pad if pos == 0 else 2 * pad + 1)
            out.append(running)
        return tuple(out)

    return attrs.evolve(base, strides_a=strides("A"), strides_b=strides("B"), strides_c=strides("C"),
                        strides_d=strides("D"))


def check_cases(built: Built, emu: Emulator, cases: Iterable[tuple[Any, ...]],
                seed: Callable[[GemmProblem], int] = lambda problem: problem.k) -> None:
    """Run `built` on each (problem, alpha, beta[, epilogue]) and check it, naming the failing case."""
    for problem, alpha, beta, *rest in cases:
        ep = rest[0] if rest else None
        result = run(built, problem, alpha=alpha, beta=beta, emulator=emu, epilogue=ep, seed=seed(problem))
        try:
            result.check()
        except AssertionError as exc:
            raise AssertionError(f"{built.name} on {problem}, alpha {alpha}, beta {beta}, {ep}: {exc}") from None
