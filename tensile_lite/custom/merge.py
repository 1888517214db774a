"""A solution naming a custom kernel, with the kernel's `custom.config` merged over it as upstream does.

Upstream (`parseLibraryLogicData` in tensilelite/Tensile/LibraryIO.py, hipBLASLt 7d9fb683) does, for a
solution whose `CustomKernelName` is set:

- the kernel's `InternalSupportParams` win; keys only the solution's carry are added to them
  (`getCustomKernelConfig`);
- every top-level key of the config replaces the solution's (`KernelLanguage` becomes `Assembly` and
  `CustomKernelName` the kernel's name), and the solution's derived values are derived again;
- the config's `ProblemType` replaces the solution's, with `ActivationType` taken from the file's, and must
  then equal the file's problem type (it stops otherwise).

Here the file's problem type is kept (the library is keyed by it); the config's must agree with it on what
the kernel's code depends on, or the file is refused naming the differences. Derived values are re-checked by
`Solution.from_params` on the merged parameters.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from tensile_lite.custom.config import ConfigError, plain_config, read_kernel_file
from tensile_lite.custom.locate import Folder, kernel_file
from tensile_lite.errors import LogicError, Where
from tensile_lite.model.params import Params
from tensile_lite.model.problem import ProblemType
from tensile_lite.model.solution import CustomSource, Solution

# The problem-type fields a kernel's code depends on: a custom kernel written for other values is refused.
_AGREE = ("operation_identifier", "a_type", "b_type", "dest_type", "compute_type", "compute_input_type",
          "high_precision_accumulate", "use_beta", "use_bias", "use_scale_ab", "use_scale_cd",
          "use_scale_alpha_vec", "use_e", "gradient", "output_amax_d", "sparse")


def _check_problem(raw: Params, file_pt: ProblemType, where: Where, path: Path) -> None:
    given = {**raw, "ActivationType": file_pt.params.get("ActivationType", "none")}
    try:
        theirs = ProblemType.from_params(Params(given), where)
    except LogicError as exc:
        raise LogicError(f"custom kernel {path}: its custom.config ProblemType: {exc.message}", where) from None
    differ = [f"{f}: {getattr(file_pt, f)} != {getattr(theirs, f)}" for f in _AGREE
              if getattr(file_pt, f) != getattr(theirs, f)]
    if differ:
        raise LogicError(f"custom kernel {path} is written for another problem type than the file's "
                         f"({'; '.join(differ)})", where)


def merge(sol: Solution, folder: Folder, where: Where) -> Solution:
    """`sol` with its custom kernel's config merged over it and the kernel's file attached; `sol` itself
    when it names no custom kernel."""
    if not sol.is_custom:
        return sol
    at = attrs.evolve(where, solution_index=sol.index, solution_name=sol.name or None)
    path = kernel_file(folder, sol.custom_kernel_name, at)
    try:
        kernel = read_kernel_file(path)
    except ConfigError as exc:
        raise LogicError(f"custom kernel {path}: {exc}", attrs.evolve(at, parameter="CustomKernelName")) from None
    except OSError as exc:
        raise LogicError(f"custom kernel {path} cannot be read: {exc.strerror or exc}",
                         attrs.evolve(at, parameter="CustomKernelName")) from None
    config = plain_config(kernel)
    problem = config.pop("ProblemType", None)
    if problem is not None:
        _check_problem(problem, sol.problem_type, attrs.evolve(at, parameter="ProblemType"), path)
    own = sol.params.get("InternalSupportParams")
    support = dict(config["InternalSupportParams"])
    for key, value in (own.items() if isinstance(own, Params) else ()):
        support.setdefault(key, value)
    config.update(InternalSupportParams=Params(support), KernelLanguage="Assembly",
                  CustomKernelName=sol.custom_kernel_name)
    params = Params({**sol.params, **config})
    try:
        merged = Solution.from_params(sol.problem_type, params, sol.arch, sol.index, at)
    except LogicError as exc:
        raise LogicError(f"after merging custom kernel {path}'s custom.config: {exc.message}", exc.where) from None
    return attrs.evolve(merged, custom_source=CustomSource(str(path), kernel.sha256))
