"""`tensile-lite verify-library`: run every kernel of a built library on the CPU emulator and compare
its results with numpy."""

from __future__ import annotations

import argparse
import json
import sys

from tensile_lite.verify import verify_library

NAME = "verify-library"
HELP = "run a built library's kernels on the CPU emulator and check them against numpy"
DESCRIPTION = (
    "For each kernel of the library TensileCreateLibrary wrote to OUTDIR (OUTDIR/library, or OUTDIR itself), "
    "take a solution that uses it, make problems consistent with it (full tiles, edge tiles in both free "
    "dimensions, K not a multiple of DepthU, batch > 1, beta zero and non-zero, alpha zero, K zero), run "
    "them on the emulator with the arguments the runtime would pack, and compare D with a float64 numpy "
    "reference within a per-type tolerance (the worst-case accumulation error of the compute type, "
    "(K+3)*u*|alpha|*sum|a*b| + 2u*|beta*c|, plus half an ulp of D's type; xf32 kernels add their inputs' "
    "rounding, 2*2^-11*|alpha|*sum|a*b|). Large problems run only their "
    "corner, edge and one interior tile. Grouped-GEMM kernels run those problems as the GEMMs of one launch "
    "through the library's argument table (argType 1) and one through hipBLASLt's UserArguments (argType 2, "
    "when the problem type supports them), each GEMM checked against its own reference. In-kernel split-K "
    "kernels (GlobalSplitUAlgorithm MultipleBufferSingleKernel) run with the solution's GSU, every slice of "
    "each tile they run, with a poisoned workspace and a zeroed Synchronizer whose counters must be back at 0; "
    "cases with K below the GSU's minimum, and for a 2024 library those with padded C/D, run with GSU 1, as "
    "upstream's runtime must (ROCm 7.x passes such kernels C's and D's own strides). MultipleBuffer "
    "split-K kernels run into a poisoned workspace and then the runtime's conversion kernel, found by name in "
    "Kernels.so-000-<gfx>.hsaco, into D; a GSU-1 MultipleBuffer solution whose library lets the runtime "
    "override GSU runs its edge case that way with a user's GSU of 2. Problems a solution's predicates refuse "
    "(sizes, GlobalSplitUCheckMinK, WorkgroupMappingXCCCheck) are not run. BGRADB kernels also have their "
    "bias output (B's column sums over K) checked. OutputAmaxD kernels also have their amax (max |D before scaleD|) and "
    "AmaxSync checked, when the whole grid ran; UseE kernels their E (after the bias, before the activation, at "
    "strides of its own). fp8/bf8 data are quantised in the target's encoding (FNUZ on gfx940/941/942, OCP on "
    "gfx950 and gfx12), fp8/bf8 D saturates; int32 epilogues (ScaleAlphaVec, the i32 activations) are exact with "
    "wrap-around. "
    "Kernels the verifier or the emulator cannot handle are reported as skipped with the reason. Exit status: "
    "0 when nothing failed, 1 when a kernel failed, 2 on unusable input."
)


def _kernels(value: str) -> int | None:
    if value == "all":
        return None
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'all', got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("the number of kernels must be at least 1")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("outdir", metavar="OUTDIR", help="the output folder of TensileCreateLibrary")
    p.add_argument("--arch", help="verify only this architecture (default: every one in the library)")
    p.add_argument("--kernels", type=_kernels, default=None, metavar="N|all",
                   help="verify the first N kernels, by architecture then name (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    report = verify_library(args.outdir, arch=args.arch, limit=args.kernels, seed=args.seed,
                            progress=(lambda _: None) if args.quiet else _progress)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=1)
        print()
    else:
        print(report.table())
    return 0 if report.ok else 1

