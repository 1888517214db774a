"""Run a generated GEMM kernel on the emulator and compare it with a float64 numpy reference.

The inputs are quantised to their element type first and the reference is computed from exactly
those values. Padding around every tensor (between leading dimensions, between batches) is filled
with NaN, and D starts as NaN everywhere: a kernel that reads anything outside the problem, reads C
when beta is 0, or writes outside M x N x batch fails the comparison.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

from tensile_lite.asm.gemm import GemmProblem, generate, kernel_name, num_workgroups, pack_kernel_args
from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.emu import DeviceMemory, Emulator
from tensile_lite.model import DataType, ProblemType, Solution

_NAN_BITS = {2: 0x7E00, 4: 0x7FC00000}


def to_bits(values: np.ndarray, dt: DataType) -> np.ndarray:
    """float64/32 values -> element bit patterns (uint16 / uint32), round to nearest even."""
    if dt is DataType.S:
        return values.astype(np.float32).view(np.uint32)
    if dt is DataType.H:
        return values.astype(np.float16).view(np.uint16)
    f = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bits(bits: np.ndarray, dt: DataType) -> np.ndarray:
    if dt is DataType.S:
        return bits.view(np.float32).astype(np.float64)
    if dt is DataType.H:
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _bits_dtype(dt: DataType) -> type:
    return np.uint32 if dt.num_bytes == 4 else np.uint16


@attrs.frozen
class Built:
    solution: Solution
    name: str
    path: Path


def build(toolchain: Toolchain, sol: Solution, out_dir: Path) -> Built:
    name = kernel_name(sol)
    text = generate(sol, name)
    obj = out_dir / f"{name}.o"
    co = out_dir / f"{name}.co"
    assemble(toolchain, text, sol.arch, obj)
    link(toolchain, [obj], co)
    obj.unlink()
    return Built(sol, name, co)


def _assignments(pt: ProblemType, tensor: str) -> tuple[int, ...]:
    return {"A": pt.index_assignments_a, "B": pt.index_assignments_b}.get(tensor, tuple(range(pt.num_indices_c)))


def _tensor(pt: ProblemType, problem: GemmProblem, tensor: str, rng: np.random.Generator, dt: DataType,
            fill: str) -> tuple[np.ndarray, np.ndarray]:
    """(flat bit buffer with NaN padding, float64 values indexed [i or l, j or l, batch] by index)."""
    assign = _assignments(pt, tensor)
    strides = (1, *problem.tensor_strides(pt, tensor))
    sizes = [problem.index_size(pt, i) for i in assign]
    count = max(problem.tensor_elements(pt, tensor), 1)
    flat = np.full(count, _NAN_BITS[dt.num_bytes], dtype=_bits_dtype(dt))
    if fill == "random":
        vals = rng.integers(-8, 9, size=sizes).astype(np.float64) / 8.0 + rng.uniform(-0.05, 0.05, size=sizes)
    else:
        vals = np.full(sizes, np.nan)
    bits = to_bits(vals, dt) if fill == "random" else np.full(sizes, _NAN_BITS[dt.num_bytes], _bits_dtype(dt))
    if all(s > 0 for s in sizes):
        idx = np.zeros(sizes, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
            shape = [1] * len(sizes)
            shape[axis] = size
            idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
        flat[idx.reshape(-1)] = bits.reshape(-1)
    return flat, from_bits(bits, dt) if fill == "random" else vals


def _reference(pt: ProblemType, a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float, beta: float,
               problem: GemmProblem) -> np.ndarray:
    """D[i, j, batch] in float64 from the values as indexed by each tensor's assignments."""
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
    c3 = c if c.ndim == 3 else c[..., None]
    prod = np.einsum("ikb,kjb->ijb", a3, b3) if problem.k else np.zeros(c3.shape)
    out = alpha * prod
    if beta != 0:
        out = out + beta * c3
    return out, np.einsum("ikb,kjb->ijb", np.abs(a3), np.abs(b3)) if problem.k else np.zeros(c3.shape)


def emulator_for(built: Built) -> Emulator:
    return Emulator(built.path)


@attrs.frozen
class Result:
    got: np.ndarray        # D as computed, float64 [m, n, batch]
    want: np.ndarray       # reference
    tolerance: np.ndarray  # per element
    untouched: bool        # nothing outside M x N x batch was written
    instructions: int

    def check(self) -> None:
        assert self.untouched, "the kernel wrote D outside the problem"
        bad = ~(np.abs(self.got - self.want) <= self.tolerance)
        if bad.any():
            where = np.argwhere(bad)[:5]
            detail = ", ".join(f"{tuple(w)}: got {self.got[tuple(w)]!r} want {self.want[tuple(w)]!r}" for w in where)
            raise AssertionError(f"{int(bad.sum())} of {bad.size} elements differ: {detail}")


def run(built: Built, problem: GemmProblem, *, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
        emulator: Emulator | None = None, gemm_count: int = 1, arg_type: int = 0) -> Result:
    sol = built.solution
    pt = sol.problem_type
    rng = np.random.default_rng(seed)
    a_flat, a = _tensor(pt, problem, "A", rng, pt.a_type, "random")
    b_flat, b = _tensor(pt, problem, "B", rng, pt.b_type, "random")
    if alpha == 0:
        # alpha == 0 must not read A or B at all: make any read visible as NaN in D
        a_flat[:] = _NAN_BITS[pt.a_type.num_bytes]
        b_flat[:] = _NAN_BITS[pt.b_type.num_bytes]
    # beta == 0: C must never be read, so it holds only NaN
    c_flat, c = _tensor(pt, problem, "C", rng, pt.dest_type, "random" if beta != 0 else "nan")
    d_flat, _ = _tensor(pt, problem, "D", rng, pt.dest_type, "nan")
    mem = DeviceMemory()
    buffers = {"A": mem.alloc(a_flat), "B": mem.alloc(b_flat), "C": mem.alloc(c_flat), "D": mem.alloc(d_flat)}
    kernargs = pack_kernel_args(sol, problem, buffers, alpha, beta, gemm_count=gemm_count, arg_type=arg_type)
    emu = emulator or emulator_for(built)
    grid = num_workgroups(sol, problem)
    stats = emu.launch(built.name, grid=(max(grid, 1), 1, 1), block=(sol.num_threads, 1, 1), kernargs=kernargs,
                       memory=mem) if grid else None
    d_out = mem.array(buffers["D"], _bits_dtype(pt.dest_type), d_flat.size)
    # D values at the problem's elements, and a check that everything else is untouched
    assign = _assignments(pt, "D")
    strides = (1, *problem.tensor_strides(pt, "D"))
    sizes = [problem.index_size(pt, i) for i in assign]
    idx = np.zeros(sizes, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[axis] = size
        idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    got = from_bits(d_out[idx], pt.dest_type)
    outside = np.ones(d_flat.size, dtype=bool)
    outside[idx.reshape(-1)] = False
    untouched = bool(np.all(d_out[outside] == d_flat[outside]))
    want, mag = _reference(pt, a, b, c if beta != 0 else np.zeros(sizes), alpha, beta, problem)
    if got.ndim == 2:
        got = got[..., None]
    # f32 accumulation over K products, then one rounding to the destination type
    out_eps = {DataType.S: 2.0 ** -24, DataType.H: 2.0 ** -11, DataType.B: 2.0 ** -8}[pt.dest_type]
    # ... plus half a unit in the last place of the destination's subnormals
    out_min = {DataType.S: 2.0 ** -149, DataType.H: 2.0 ** -24, DataType.B: 2.0 ** -133}[pt.dest_type]
    tol = abs(alpha) * mag * max(problem.k, 1) * 2.0 ** -23 + np.abs(want) * out_eps * 1.01 + out_min
    if beta != 0:
        tol = tol + np.abs(beta * (c if c.ndim == 3 else c[..., None])) * 2.0 ** -23
    return Result(got, want, tol, untouched, stats.instructions if stats else 0)


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
