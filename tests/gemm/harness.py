"""Run a generated GEMM kernel on the emulator and compare it with the verifier's float64 reference.

A test adapter over tensile_lite/verify: launches go through `verify.device` (the launch path of
verify-library: arguments packed from the solution's `.dat` entry, the split-K buffers of
`verify.splitk`, the runtime's conversion launches), the tensors are the verifier's
(`verify.tensors.place`, its sentinel NaN in every gap), the reference and its tolerance are
`verify.reference.expected`; what the tests choose themselves (the epilogue's inputs, the value
distribution, which GSU) is translated here.
The inputs are quantised to their element type first and the reference is computed from exactly
those values. Padding around every tensor (between leading dimensions, between batches) holds the
sentinel, and so does D before the launch: a kernel that reads anything outside the problem, reads C
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
from tensile_lite.host import ARG_TYPE_TABLE, EpilogueArgs, GemmProblem, num_workgroups
from tensile_lite.host import conversion as host_conversion
from tensile_lite.model import DataType, ProblemType, Solution
from tensile_lite.verify import amax as verify_amax
from tensile_lite.verify import conversion, device, runtime_args, splitk
from tensile_lite.verify import epilogue as verify_epilogue
from tensile_lite.verify.compare import as_mnb
from tensile_lite.verify.elements import Element, element, operand_types
from tensile_lite.verify.reference import Expected, expected
from tensile_lite.verify.runtime_view import RuntimeSolution, from_model
from tensile_lite.verify.tensors import Tensor, assignments, place, read_back
from tests.gemm.bits import from_bits, to_bits
from tests.gemm.epilogue_ref import Epilogue, Vectors


@attrs.frozen
class Built:
    solution: Solution
    name: str
    path: Path
    # for MultipleBuffer split-K: where the runtime's conversion kernels are built, and those built
    toolchain: Toolchain | None = attrs.field(default=None, eq=False, repr=False)
    conversions: dict[str, Emulator] = attrs.field(factory=dict, eq=False, repr=False)
    # what the runtime is told about the kernel: its library entry, as a library would write it
    runtime: RuntimeSolution = attrs.field(eq=False, repr=False,
                                           default=attrs.Factory(lambda self: from_model(self.solution), takes_self=True))

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
    assemble(toolchain, text, sol.arch, obj, wave64=sol.wavefront_size == 64)
    link(toolchain, [obj], co)
    obj.unlink()
    return Built(sol, name, co, toolchain)


def _element(sol: Solution, dt: DataType) -> Element:
    el = element(dt, sol.arch)
    assert el is not None, f"no verifier element for {dt.letter} on {sol.arch}"
    return el


def _tensor(sol: Solution, problem: GemmProblem, tensor: str, rng: np.random.Generator, dt: DataType,
            fill: bool) -> Tensor:
    """Tensor `tensor` with random values (eighths plus a small fraction, so sums cancel and every
    mantissa bit is used; small integers for integer types) when `fill`, else only the sentinel."""
    pt = sol.problem_type
    el = _element(sol, dt)
    if not fill:
        return place(pt, problem, tensor, el, None)
    sizes = tuple(problem.index_size(pt, i) for i in assignments(pt, tensor))
    if dt.is_integral:
        raw = rng.integers(-12, 13, size=sizes).astype(np.float64)
    else:
        raw = rng.integers(-8, 9, size=sizes).astype(np.float64) / 8.0 + rng.uniform(-0.05, 0.05, size=sizes)
    return place(pt, problem, tensor, el, el.round(raw))


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
    # split-K in the kernel: which Synchronizer counters are not back at 0 (None: all are, or no Synchronizer)
    counters_left: str | None = None

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
        assert self.counters_left is None, self.counters_left
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
        assert self.counters_left is None, self.counters_left
        self._fail(self.got != self.rounded, self.rounded)


@attrs.frozen
class Call:
    """One GEMM's device buffers and the values the reference needs."""

    problem: GemmProblem
    alpha: float
    beta: float
    epilogue: Epilogue
    tensors: dict[str, Tensor]  # A, B, C, D as set up (D: the sentinel)
    vectors: Vectors
    buffers: device.Buffers     # every device buffer of the call by name, in its memory
    e: Tensor | None = None     # UseE: E as set up (strides of its own, unlike D's)


def fp8_encoding(sol: Solution) -> str:
    """How the target encodes fp8/bf8 elements ("fnuz" on gfx94x, "ocp" on gfx950)."""
    return arch_info(sol.arch).fp8 or "fnuz"


def prepare(sol: Solution, mem: DeviceMemory, problem: GemmProblem, alpha: float, beta: float,
            ep: Epilogue | None, rng: np.random.Generator) -> Call:
    """A, B, C, D and the epilogue's buffers of one GEMM in `mem` (A and B only the sentinel when
    alpha is 0, C when beta is 0, so a kernel reading what it must not fails). A kernel that reads A
    and B whatever alpha is (the gradient bias from B sums B at alpha 0) gets real values there."""
    pt = sol.problem_type
    ep = ep or Epilogue()
    a_type, b_type = operand_types(pt)
    a = _tensor(sol, problem, "A", rng, a_type, True)
    b = _tensor(sol, problem, "B", rng, b_type, True)
    if alpha == 0 and not epilogue_features(pt).reads_operands_always:
        a = attrs.evolve(a, flat=np.full_like(a.flat, a.element.sentinel))
        b = attrs.evolve(b, flat=np.full_like(b.flat, b.element.sentinel))
    tensors = {"A": a, "B": b, "C": _tensor(sol, problem, "C", rng, pt.dest_type, beta != 0),
               "D": _tensor(sol, problem, "D", rng, pt.dest_type, False)}
    vectors = ep.vectors_for(pt, problem, rng)
    buffers = device.place(mem, {**{name: t.flat for name, t in tensors.items()}, **vectors.buffers})
    return Call(problem, alpha, beta, ep, tensors, vectors, buffers)


def with_outputs(built: Built, call: Call, gsu: int) -> Call:
    """The buffers the kernel writes besides D: the verifier's amax buffers (OutputAmaxD), E (UseE), and
    a split-K call's workspace and Synchronizer (`verify.splitk`, for a call with GSU `gsu`)."""
    sol = built.solution
    pt = sol.problem_type
    extra: dict[str, np.ndarray] = {}
    if pt.output_amax_d:
        extra.update(verify_amax.output_buffers(num_workgroups(sol, call.problem, gsu=1)))
        extra[verify_amax.SYNC] = verify_amax.sync_buffer()
    e = verify_epilogue.e_tensor(pt, call.problem) if pt.use_e else None
    if e is not None:
        extra["E"] = e.flat
    extra.update(splitk.buffers(built.runtime, call.problem, gsu))
    return attrs.evolve(call, buffers=device.place(call.buffers.memory, extra, onto=call.buffers), e=e)


def _epilogue_args(pt: ProblemType, call: Call) -> EpilogueArgs:
    strides = verify_epilogue.e_strides(pt, call.problem) if call.e is not None else ()
    return attrs.evolve(call.epilogue.arguments(pt), strides_e=strides)


def _read(t: Tensor, buffers: device.Buffers, name: str) -> tuple[np.ndarray, bool]:
    """A tensor's values after a launch as [m, n, batch], and whether the rest of its buffer is untouched."""
    _, values, outside = read_back(t, buffers.read(name))
    return as_mnb(values), bool(np.all(outside == np.asarray(t.element.sentinel).astype(outside.dtype)))


def _verify_epilogue(pt: ProblemType, call: Call) -> verify_epilogue.Epilogue | None:
    """The test's epilogue as the verifier's reference takes it (None: the problem type has none)."""
    feat = epilogue_features(pt)
    if not feat.any:
        return None
    ep, p, along = call.epilogue, call.problem, call.vectors.along
    scalars: dict[str, float] = {}
    if feat.scale_ab == "Scalar":
        scalars.update(scale_a=1.0 if ep.scale_a is None else ep.scale_a,
                       scale_b=1.0 if ep.scale_b is None else ep.scale_b)
    if feat.scale_cd:
        scalars.update(scale_c=1.0 if ep.scale_c is None else ep.scale_c,
                       scale_d=1.0 if ep.scale_d is None else ep.scale_d)
    row, col = np.ones(p.m), np.ones(p.n)
    for name in ("scaleA", "scaleB", "scaleAlphaVec"):
        v = along.get(name)
        if v is None:
            continue
        if v.shape[0] == p.m and v.shape[1] == 1:   # a vector along M ([m, 1, 1])
            row = row * v[:, 0, 0]
        else:
            col = col * v[0, :, 0]
    activation = ep.activation if feat.activation != "none" else "none"
    return verify_epilogue.Epilogue(_epilogue_args(pt, call), {}, row=row, col=col, bias=along.get("bias"),
                                    activation=activation, activation_args=ep.activation_args, e=call.e,
                                    **scalars)


def reference(sol: Solution, call: Call) -> Expected:
    """The verifier's reference of `call` and its tolerance."""
    pt = sol.problem_type
    t = call.tensors
    a, b = t["A"], t["B"]
    if arch_info(sol.arch).mfma_flushes_f16_denorms:
        # CDNA2's f16 MFMAs read subnormal inputs as zero (the emulator models it)
        a, b = (attrs.evolve(x, values=np.where(np.abs(x.values) < 2.0 ** -14, 0.0, x.values))
                if x.element.dtype is DataType.H else x for x in (a, b))
    ep = _verify_epilogue(pt, call)
    beta = float(int(call.beta)) if pt.compute_type is DataType.I else call.beta  # packed truncated
    # C takes part when beta' = beta * scaleC is not 0 (what the kernel's f32 product decides)
    beta_c = np.float32(beta) * np.float32(ep.scale_c if ep is not None else 1.0)
    c = t["C"] if pt.use_beta and beta_c != 0 else None
    d = t["D"]
    return expected(pt, a, b, c, d.letters, d.shape, call.problem.k, call.alpha, beta, ep, out=d.element)


def result(sol: Solution, call: Call, instructions: int, *, amax_written: bool = True) -> Result:
    pt = sol.problem_type
    got, untouched = _read(call.tensors["D"], call.buffers, "D")
    want = reference(sol, call)
    e = None
    if call.e is not None:
        assert want.e is not None
        e_got, e_untouched = _read(call.e, call.buffers, "E")
        e = (e_got, as_mnb(want.e.exact), as_mnb(want.e.tolerance), e_untouched)
    amax = None
    if pt.output_amax_d and amax_written:
        got_amax = float(call.buffers.read(verify_amax.OUT).view(np.float32)[0])
        amax = (got_amax, *want.amax())
    left = splitk.check({splitk.SYNCHRONIZER: call.buffers.read(splitk.SYNCHRONIZER)}) \
        if splitk.SYNCHRONIZER in call.buffers else None
    return Result(got, as_mnb(want.exact), as_mnb(want.tolerance), untouched, instructions, pt.dest_type,
                  fp8_encoding(sol), amax, e, left)


@attrs.frozen
class Setup:
    """One call made ready: its buffers and the launches that run it (the GEMM kernel, then for a
    MultipleBuffer split-K call the runtime's conversion kernel)."""

    call: Call
    launches: tuple[device.Launch, ...]
    gsu: int  # the GSU the call runs with


def setup(built: Built, problem: GemmProblem, *, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
          emulator: Emulator | None = None, gemm_count: int = 1, arg_type: int = 0,
          epilogue: Epilogue | None = None, gsu: int | None = None) -> Setup:
    """The buffers and launches of one argType-0 call (see `run`)."""
    sol, rs = built.solution, built.runtime
    pt = sol.problem_type
    used = splitk.launch_gsu(rs, problem, gsu)
    rng = np.random.default_rng(seed)
    call = with_outputs(built, prepare(sol, DeviceMemory(), problem, alpha, beta, epilogue, rng), used)
    gemm = device.gemm(emulator or emulator_for(built), built.name, rs, problem, call.buffers, alpha, beta,
                       _epilogue_args(pt, call), gsu=used, gemm_count=gemm_count, arg_type=arg_type)
    launches = [gemm]
    if conversion.needed(rs, used):
        ep = _verify_epilogue(pt, call)
        helper = built.conversion(conversion.variant(rs, problem, ep, used))
        launches.append(conversion.launch(helper, rs, problem, alpha, beta, ep, used, call.buffers))
    return Setup(call, tuple(launches), used)


def run(built: Built, problem: GemmProblem, *, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
        emulator: Emulator | None = None, gemm_count: int = 1, arg_type: int = 0,
        epilogue: Epilogue | None = None, gsu: int | None = None) -> Result:
    """One argType-0 call of `built` on `problem` (the header may claim another gemm_count/argType);
    `gsu` overrides the solution's, as a user may at run time (None: the solution's, or 1 for a split-K
    kernel whose C or D is padded, `verify.splitk.launch_gsu`)."""
    s = setup(built, problem, alpha=alpha, beta=beta, seed=seed, emulator=emulator, gemm_count=gemm_count,
              arg_type=arg_type, epilogue=epilogue, gsu=gsu)
    return result(built.solution, s.call, device.run_all(s.launches).instructions)


def run_grouped(built: Built, problems: list[GemmProblem], *, arg_type: int, alphas: list[float],
                betas: list[float], epilogues: list[Epilogue | None] | None = None, seed: int = 0,
                emulator: Emulator | None = None, reverse: bool = False) -> list[Result]:
    """One grouped launch (argType 1: the library's table, 2: user arguments) over `problems`, each GEMM
    with its own split-K buffers, its workgroups in reverse order when `reverse`; a MultipleBuffer
    argType-1 launch is followed by the grouped conversion."""
    sol, rs = built.solution, built.runtime
    pt = sol.problem_type
    mem = DeviceMemory()
    rng = np.random.default_rng(seed)
    gsu = runtime_args.launch_gsu(rs)
    eps = epilogues or [None] * len(problems)
    calls = [with_outputs(built, prepare(sol, mem, p, a, b, ep, rng), gsu)
             for p, a, b, ep in zip(problems, alphas, betas, eps, strict=True)]
    gemm = device.grouped(emulator or emulator_for(built), built.name, rs, problems, [c.buffers for c in calls],
                          alphas, betas, [_epilogue_args(pt, c) for c in calls], arg_type=arg_type)
    if reverse and gemm.workgroups is None:
        gemm = gemm.only((w, 0, 0) for w in reversed(range(gemm.grid[0])))
    launches = [gemm]
    if conversion.needed(rs, gsu) and arg_type == ARG_TYPE_TABLE:
        convs = [conversion.GroupedCall(c.problem, c.buffers.addresses, c.alpha, c.beta, _verify_epilogue(pt, c))
                 for c in calls]
        helper = built.conversion(conversion.grouped_variant(rs, convs, gsu))
        launches.append(conversion.grouped_launch(helper, rs, convs, gsu, mem))
    instructions = device.run_all(launches).instructions
    # hipBLASLt's user arguments carry no amax output (amax.py): only argType 1 writes one
    return [result(sol, c, instructions, amax_written=arg_type == ARG_TYPE_TABLE) for c in calls]


def padded(pt: ProblemType, m: int, n: int, k: int, batch: int = 1, pad: int = 3) -> GemmProblem:
    """A problem whose tensors have `pad` extra elements per leading dimension and more between
    batches, so that every tensor has NaN-filled gaps a kernel must never read."""
    base = GemmProblem(m, n, k, batch)

    def strides(tensor: str) -> tuple[int, ...]:
        out, running = [], 1
        for pos, idx in enumerate(assignments(pt, tensor)[:-1]):
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
