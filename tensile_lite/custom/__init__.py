"""Custom kernels: hipBLASLt's hand-written assembly that a logic file's solution names in `CustomKernelName`.

    folder = find_folder(flag, logic_root)       # locate.py: --custom-kernels-dir > $TENSILE_LITE_CUSTOM_KERNELS_DIR
                                                 #   > tensilelite/Tensile/CustomKernels above the logic root
    sol = merge(sol, folder, where)              # merge.py: custom.config over the solution, file attached
    decide(sol) -> CustomBuild(sol.custom_source) # the support gate (asm/gemm/support.py)
    CustomKernel(name, arch, sol.custom_source)  # kernel.py: the pipeline's source, the file's text unchanged

The reader merges while it reads (logic/reader.py), so every consumer of a logic file (build, coverage,
the library plan) sees the solution as upstream's build does; a missing or unreadable kernel file makes the
logic file unreadable, named with the solution and where the file was looked for. Upstream's semantics and
where they come from: docs/custom_kernels.md.
"""

from tensile_lite.custom.config import ConfigError, KernelFile, parse_config, read_kernel_file
from tensile_lite.custom.kernel import CustomBuild, CustomKernel
from tensile_lite.custom.locate import ENV, FLAG, LAYOUT, Folder, find_folder, kernel_file
from tensile_lite.custom.merge import merge

__all__ = ["ENV", "FLAG", "LAYOUT", "ConfigError", "CustomBuild", "CustomKernel", "Folder", "KernelFile",
           "find_folder", "kernel_file", "merge", "parse_config", "read_kernel_file"]
