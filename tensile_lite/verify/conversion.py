"""MultipleBuffer split-K (globalAccumulation 2) as the runtime drives it (spec/epilogue_semantics.md §5.3,
host/conversion.py): a call with GSU > 1 is two launches.

1. The GEMM kernel, with the workspace in D's and C's places and packed D/C strides (the host's
   packer does that for a MultipleBuffer solution), stores GSU compute-type slices (f32, or int32 for
   int32 compute) of M x N x batch: element (m, n, b) of slice g at g*M*N*B + m + n*M + b*M*N. The verifier poisons the workspace with 1e30, so a
   slice nobody wrote wrecks the sum, and tells the tiles a subset of workgroups wrote from it.
2. The conversion kernel the runtime looks up by name in `Kernels.so-000-<gfx>.hsaco` (the host's
   `conversion_name`: problem type, the call's bias type, GSU bucket, vector width), 256 threads per
   workgroup over the M x N x batch elements, `vw` consecutive ones along M per thread, with the
   runtime's argument record (`host.conversion.pack_call`). It sums the slices and runs the whole epilogue into
   the real D (and E) at their own strides. When only some tiles' GEMM workgroups ran, only the
   conversion workgroups holding an element of those tiles run.

A missing conversion kernel is a failure: the runtime could not complete the call. The grouped conversion
(`grouped_launch`, one `_GG` launch over every GEMM's table record after a grouped argType-1 launch) is
driven by the emulator tests; verify-library does not make grouped MultipleBuffer launches yet
(grouped.check_launchable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs
import numpy as np

from tensile_lite.emu import DeviceMemory, Emulator
from tensile_lite.host import GemmProblem
from tensile_lite.host import conversion as host_conversion
from tensile_lite.verify import compare, device
from tensile_lite.verify.epilogue import Epilogue
from tensile_lite.verify.mapping import LaunchId, Tile
from tensile_lite.verify.runtime_view import RuntimeSolution
from tensile_lite.verify.splitk import POISON


def helper_code_object(library: Path, arch: str) -> Path:
    """Where the runtime finds the helper kernels of `arch`, beside the placeholder code objects."""
    return library / f"Kernels.so-000-{arch}.hsaco"


def needed(rs: RuntimeSolution, gsu: int) -> bool:
    """Whether a call with GSU `gsu` goes through the conversion kernel."""
    return rs.multiple_buffer and gsu > 1


def variant(rs: RuntimeSolution, problem: GemmProblem, ep: Epilogue | None,
            gsu: int) -> host_conversion.ConversionKernelName:
    """The conversion kernel the runtime asks for on this call."""
    pt = rs.problem_type
    bias_type = None
    if pt.use_bias and not pt.gradient:
        bias_type = ep.args.bias_type if ep is not None and ep.args.bias_type is not None else pt.bias_data_types[0]
    vw = host_conversion.launch_vector_width(pt, [problem])
    bucket = host_conversion.bucket(gsu)
    return host_conversion.ConversionKernelName(bias_type, bucket, vw,
                                                host_conversion.conversion_name(pt, bias_type, bucket, vw))


def slices_written(rs: RuntimeSolution, problem: GemmProblem, gsu: int, ws: np.ndarray) -> set[Tile]:
    """Tiles of which some slice in the workspace (its contents after the GEMM launch) was written."""
    pt = rs.problem_type
    m, n = problem.m, problem.n
    batch = problem.batch if pt.num_indices_c == 3 else 1
    count = gsu * m * n * batch
    if not count:
        return set()
    changed = (ws[:count] != POISON).reshape(gsu, batch, n, m).any(axis=0)  # [b, n, m]
    return compare.tiles_of(np.transpose(changed, (2, 1, 0)), rs.solution.macro_tile)


def workgroups(rs: RuntimeSolution, problem: GemmProblem, vw: int, tiles: Iterable[Tile] | None) -> list[LaunchId]:
    """The conversion workgroups to run: every one (`tiles` None), or those with an element of `tiles`."""
    pt = rs.problem_type
    total = host_conversion.work_groups(pt, problem, vw)
    if tiles is None:
        return [(w, 0, 0) for w in range(total)]
    mt0, mt1 = rs.solution.macro_tile
    m, n = problem.m, problem.n
    per_group = host_conversion.THREADS * vw
    wanted: set[int] = set()
    for t0, t1, b in tiles:
        i = np.arange(t0 * mt0, min((t0 + 1) * mt0, m))
        j = np.arange(t1 * mt1, min((t1 + 1) * mt1, n))
        flat = i[:, None] + m * j[None, :] + m * n * b
        wanted.update(int(w) for w in np.unique(flat // per_group))
    return [(w, 0, 0) for w in sorted(wanted)]


def _call(problem: GemmProblem, buffers: Mapping[str, int], alpha: float, beta: float, ep: Epilogue | None,
          gsu: int) -> host_conversion.ConversionCall:
    """The runtime's conversion arguments of one GEMM (its epilogue's run-time values from `ep`)."""
    args = ep.args if ep is not None else None
    return host_conversion.ConversionCall(problem, buffers, alpha, beta, gsu,
                                          strides_e=args.strides_e if args else (),
                                          stride_bias=args.stride_bias if args else 0,
                                          factor_dim=args.factor_dim if args else 0,
                                          activation=args.activation if args else 0,
                                          activation_args=args.activation_args if args else ())


def launch(helper: Emulator, rs: RuntimeSolution, problem: GemmProblem, alpha: float, beta: float,
           ep: Epilogue | None, gsu: int, buffers: device.Buffers, tiles: Iterable[Tile] | None = None) -> device.Launch:
    """The conversion launch after the GEMM launch of the same call (the GEMM's buffers, in their memory),
    over the workgroups holding `tiles` (all when None). The caller checks the kernel is in `helper`."""
    v = variant(rs, problem, ep, gsu)
    call = _call(problem, buffers.addresses, alpha, beta, ep, gsu)
    return device.conversion(helper, rs, v, call, buffers.memory, workgroups(rs, problem, v.vw, tiles))


@attrs.frozen(slots=True)
class GroupedCall:
    """One GEMM of a grouped MultipleBuffer launch, as its conversion needs it."""

    problem: GemmProblem
    buffers: Mapping[str, int] = attrs.field(eq=False)
    alpha: float
    beta: float
    epilogue: Epilogue | None


def grouped_variant(rs: RuntimeSolution, calls: Sequence[GroupedCall], gsu: int) -> host_conversion.ConversionKernelName:
    """The grouped (`_GG`) conversion kernel the runtime asks for after a grouped argType-1 launch: the
    first GEMM's bias type, the vector width every GEMM allows."""
    pt = rs.problem_type
    first = variant(rs, calls[0].problem, calls[0].epilogue, gsu)
    vw = host_conversion.launch_vector_width(pt, [c.problem for c in calls])
    return host_conversion.ConversionKernelName(
        first.bias_type, first.gsu_bucket, vw,
        host_conversion.conversion_name(pt, first.bias_type, first.gsu_bucket, vw))


def grouped_launch(helper: Emulator, rs: RuntimeSolution, calls: Sequence[GroupedCall], gsu: int,
                   memory: DeviceMemory) -> device.Launch:
    """The grouped conversion launch after a MultipleBuffer argType-1 launch (same memory), every
    workgroup. Its table goes into `memory`."""
    v = grouped_variant(rs, calls, gsu)
    convs = [_call(c.problem, c.buffers, c.alpha, c.beta, c.epilogue, gsu) for c in calls]
    return device.grouped_conversion(helper, rs, v, convs, memory)
