"""The GEMM kernel writer: a frozen Solution in, comment-free assembly text out.

    text = generate(solution)                    # symbol derived from the solution
    text = generate(solution, decision=decide(solution))   # the support gate's verdict, if already made
    kernel = GemmKernel.of(solution, name)       # a KernelSource for the code-object pipeline (carries
                                                 # the verdict, so workers do not rebuild the plan)

Stages, each a module with one job: setup (arguments, grouped-GEMM search, work distribution,
addresses), global_read, local_write, local_read, mainloop, vectors (the epilogue's scales and
LDS-staged vectors), epilogue (with activation). The text is a pure function of the solution, the
name and the code object version: labels are numbered, registers laid out deterministically.

Header contract (spec/kernel_anatomy.md §1.5, epilogue_semantics.md §4): argType 0 takes the
arguments inline, whatever gemm_count says; argType 1 and 2 are grouped launches whose workgroups
find their GEMM in the library's table or in hipBLASLt's user arguments (setup.load_arguments).
WorkGroupMapping and WGMXCC order the tiles as the header says (wgm.py), StaggerU the K tiles (stagger.py);
GSU is read from the header by MultipleBufferSingleKernel kernels (splitk.py) and is 1 for the others
(the library declares what each kernel honours: support.runtime_overrides_read).
"""

from __future__ import annotations

import attrs

from tensile_lite.asm.gemm import epilogue_f64
from tensile_lite.asm.gemm.emit import Emitter
from tensile_lite.asm.gemm.epilogue import epilogue
from tensile_lite.asm.gemm.layout import build_register_map
from tensile_lite.asm.gemm.loop_clocks import MATH_CLOCKS, unrolled_loop_clocks
from tensile_lite.asm.gemm.mainloop import summation
from tensile_lite.asm.gemm.plan import GemmPlan
from tensile_lite.asm.gemm.preload import enter
from tensile_lite.asm.gemm.setup import setup
from tensile_lite.asm.gemm.support import Decision, Rejected, decide
from tensile_lite.asm.kernel import KernelSpec, kernel_header, kernel_trailer
from tensile_lite.custom.kernel import CustomBuild
from tensile_lite.errors import BuildError, Where
from tensile_lite.model import DataType, Solution, kernel_key
from tensile_lite.model.serialize import identity_bytes

KERN_ARGS_VERSION = 2


def kernel_name(sol: Solution) -> str:
    """A readable, unique symbol: problem type, macro tile, MFMA shape and the kernel key's prefix
    (two solutions share a name exactly when they share machine code)."""
    mi = sol.matrix_instruction
    mt0, mt1 = sol.macro_tile
    shape = f"MI{mi.m}x{mi.n}x{mi.b}" if mi else "MAC"
    return f"{sol.problem_type.name}_MT{mt0}x{mt1}x{sol.depth_u}_{shape}_TL{kernel_key(sol)[:12]}"


def _workgroup_ids(plan: GemmPlan) -> tuple[bool, bool, bool]:
    """Workgroup id x only: the runtime flattens the grid, except on gfx12, whose 3-D ids arrive in
    ttmp9 / ttmp7 (setup.py); the y and z ids are enabled there so that ttmp7 holds them."""
    ttmp = plan.arch.workgroup_id_source == "ttmp"
    return (True, ttmp, ttmp)


def generate(
    sol: Solution, name: str | None = None, *, code_object_version: int = 4, decision: Decision | None = None
) -> str:
    """The kernel's assembly text; a BuildError naming the solution if the writer cannot build it.
    `decision` is `support.decide(sol)` when the caller already has it (it is not made again)."""
    if decision is None:
        decision = decide(sol)
    if isinstance(decision, Rejected):
        raise BuildError(
            "the GEMM writer does not support " + "; ".join(decision.details),
            Where(solution_index=sol.index, solution_name=sol.name or None),
        )
    if isinstance(decision, CustomBuild):
        raise BuildError(
            f"custom kernel {sol.custom_kernel_name}: its own file is its text, the GEMM writer "
            "writes none (custom.CustomKernel)",
            Where(solution_index=sol.index, solution_name=sol.name or None),
        )
    name = name or kernel_name(sol)
    plan, layout, preload = decision.plan, decision.layout, decision.preload
    regs = build_register_map(plan, name, layout, preload=preload)
    spec = KernelSpec(
        name=name,
        arch=plan.arch,
        wavefront_size=plan.lanes.wave,
        arguments=tuple(p.argument for p in layout.arguments),
        workgroup_size=plan.num_threads,
        lds_bytes=plan.lds_bytes,
        workgroup_ids=_workgroup_ids(plan),
        code_object_version=code_object_version,
        kernarg_preload=preload,
        extra_metadata={"custom.config": {"InternalSupportParams": {"KernArgsVersion": KERN_ARGS_VERSION}}},
    )
    lines = kernel_header(spec)
    e = Emitter(plan, regs, lines)
    enter(e, spec)
    setup(e)
    summation(e)
    if plan.dest_type is DataType.D:
        epilogue_f64.epilogue(e)
    else:
        epilogue(e)
    e.out.flush()
    lines += kernel_trailer(spec, regs.counts)
    lines.append("")
    return "\n".join(lines)


@attrs.frozen(slots=True)
class GemmKernel:
    """A KernelSource for the code-object pipeline: frozen, picklable, text rendered on demand from
    the support gate's verdict, made once where the kernel is chosen (`of`), not again in the worker."""

    solution: Solution = attrs.field(repr=False)
    name: str
    code_object_version: int = 4
    # support.decide(solution), made by `of`; a function of `solution`, so it adds nothing to equality
    decision: Decision | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def arch(self) -> str:
        return self.solution.arch

    @property
    def wavefront_size(self) -> int:
        """The wave size the kernel is assembled for (`-mwavefrontsize64`: CDNA, and RDNA's wave64 MAC kernels)."""
        return self.solution.wavefront_size

    @classmethod
    def of(
        cls,
        sol: Solution,
        name: str | None = None,
        *,
        code_object_version: int = 4,
        decision: Decision | None = None,
    ) -> GemmKernel:
        """`decision`: `support.decide(sol)` when the caller already has it."""
        return cls(
            sol, name or kernel_name(sol), code_object_version, decide(sol) if decision is None else decision
        )

    def assembly_text(self) -> str:
        return generate(
            self.solution, self.name, code_object_version=self.code_object_version, decision=self.decision
        )

    def text_facts(self, text: str) -> dict[str, int]:
        """What the library reads from this kernel's text: its main loop's issue slots (loop_clocks.py)."""
        return {MATH_CLOCKS: unrolled_loop_clocks(text)}

    def cache_identity(self) -> bytes | None:
        """What the text is a pure function of, given the writer's code (the kernel cache adds that): the
        solution's every field, the name and the code object version; `decision` follows from the solution."""
        try:
            return identity_bytes(["gemm", 1, self.name, self.code_object_version, self.solution])
        except TypeError:  # a field of no canonical form: the cache keys this kernel by its text instead
            return None
