"""The epilogue features (tensile_lite/asm/gemm/epi/): the GEMM epilogue and the split-K conversion
kernel take their steps from the one feature list, and every feature's declared arguments are in
the argument lists the kernels are built with."""

from __future__ import annotations

from typing import Any

import pytest

from tensile_lite.asm.gemm import abi, postgsu, writer
from tensile_lite.asm.gemm.epi import order
from tensile_lite.asm.gemm.epi.base import Feature
from tensile_lite.asm.gemm.features import epilogue_features
from tensile_lite.asm.kernel import pack_arguments
from tensile_lite.host.conversion import conversion_kernels
from tensile_lite.model import ProblemType
from tests.gemm.devset import supported_kernels
from tests.gemm.solutions import problem_type


class _Recording:
    """A feature that notes which user ran its step (test-only wrapper)."""

    def __init__(self, feature: Feature, log: dict[str, dict[str, None]]) -> None:
        self._feature = feature
        self._log = log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._feature, name)

    def gemm_step(self, step: Any) -> None:
        self._log["gemm"][self._feature.name] = None
        self._feature.gemm_step(step)

    def conversion_step(self, step: Any) -> None:
        self._log["conversion"][self._feature.name] = None
        self._feature.conversion_step(step)


def _steps_run(monkeypatch: pytest.MonkeyPatch, sol: Any) -> dict[str, list[str]]:
    log: dict[str, dict[str, None]] = {"gemm": {}, "conversion": {}}
    with monkeypatch.context() as m:
        m.setattr(order, "FEATURES", tuple(_Recording(f, log) for f in order.FEATURES))
        writer.generate(sol)
        first = conversion_kernels(sol.problem_type)[0]
        postgsu.generate(sol.arch, postgsu.Variant(sol.problem_type, first.bias_type, first.gsu_bucket, first.vw,
                                                   first.name))
    return {user: list(names) for user, names in log.items()}


def test_both_users_run_the_same_feature_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """For each dev-set problem type with split-K conversion kernels, the features whose steps the
    GEMM epilogue ran are those the conversion kernel ran, in the same order."""
    seen: set[str] = set()
    with_features = 0
    for sol in supported_kernels():
        pt = sol.problem_type
        if pt.name in seen or not postgsu.supported(pt):
            continue
        seen.add(pt.name)
        ran = _steps_run(monkeypatch, sol)
        assert ran["gemm"] == ran["conversion"], pt.name
        expected = [f.name for f in order.active(epilogue_features(pt))]
        assert ran["gemm"] == expected, pt.name
        with_features += bool(expected)
    assert with_features, "no dev-set problem type with epilogue features and conversion kernels"


# a problem type that activates each feature
_ACTIVATING: dict[str, dict[str, Any]] = {
    "ScaleAB": {"UseScaleAB": "Vector"},
    "ScaleAlphaVec": {"UseScaleAlphaVec": 1},
    "Bias": {"UseBias": 1, "BiasDataTypeList": [0, 4]},
    "FactorDim": {"UseBias": 3, "BiasDataTypeList": [0]},
    "UseE": {"UseE": True, "DataTypeE": "H"},
    "Activation": {"Activation": True, "ActivationType": "hipblaslt_all"},
    "AmaxD": {"OutputAmaxD": True, "UseScaleCD": True},
    "ScaleCD": {"UseScaleCD": True},
}


def test_every_feature_has_an_activating_problem_type() -> None:
    assert set(_ACTIVATING) == {f.name for f in order.FEATURES}


@pytest.mark.parametrize("feature", order.FEATURES, ids=lambda f: f.name)
def test_declared_arguments_are_in_the_layouts(feature: Feature) -> None:
    """The feature is active for its problem type, and its declared GEMM arguments appear, in order
    and together, in the GEMM kernel's argument layout; its conversion arguments in the conversion
    kernel's (when that kernel is built for the type)."""
    pt: ProblemType = problem_type("HHS", **_ACTIVATING[feature.name])
    feat = epilogue_features(pt)
    assert feature.active(feat)
    names = [p.argument.name for p in abi.argument_layout(pt).arguments]
    declared = [a.name for a in feature.gemm_arguments(pt, feat, True)]
    assert declared or feature.name == "FactorDim"
    if declared:
        first = names.index(declared[0])
        assert names[first:first + len(declared)] == declared
    if postgsu.supported(pt):
        conv = [p.argument.name for p in pack_arguments(postgsu.arguments(pt)).arguments]
        for section in feature.conversion_arguments(pt, feat).values():
            assert [a.name for a in section] and all(a.name in conv for a in section)


def test_every_feature_has_its_reference_step() -> None:
    """The verifier's reference names a step (or says it has none) for exactly the features there are."""
    from tensile_lite.verify.epilogue import REFERENCE_STEPS
    assert set(REFERENCE_STEPS) == {f.name for f in order.FEATURES}
