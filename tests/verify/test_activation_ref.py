"""The verifier's activation reference covers every activation the kernels implement, and its bound
behaves: exact activations add nothing, approximate ones allow for the kernel's f32 sequence."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_lite.asm.gemm.activation import BY_NAME
from tensile_lite.verify import activation

ARGS = (0.5, 2.0)


@pytest.mark.parametrize("kind", sorted(BY_NAME))
def test_every_kernel_activation_has_a_reference(kind: str) -> None:
    x = np.linspace(-4.0, 4.0, 33)
    out, err = activation.activate(kind, ARGS, x, np.full(x.shape, 1e-6))
    assert out.shape == x.shape and np.all(np.isfinite(out)) and np.all(err >= 1e-6 * 0.25)


@pytest.mark.parametrize("kind", ["none", "relu", "abs"])
def test_exact_activations_keep_the_bound(kind: str) -> None:
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    err = np.full(x.shape, 3e-7)
    _, out_err = activation.activate(kind, ARGS, x, err)
    assert np.array_equal(out_err, err)


def test_values_are_the_mathematical_functions() -> None:
    x = np.array([-1.0, 0.0, 1.0])
    assert np.allclose(activation.value("sigmoid", ARGS, x), 1 / (1 + np.exp(-x)))
    assert np.allclose(activation.value("tanh", ARGS, x), 2.0 * np.tanh(0.5 * x))
    assert np.allclose(activation.value("leakyrelu", ARGS, x), [-0.5, 0.0, 1.0])
    assert np.allclose(activation.value("clippedrelu", ARGS, np.array([0.25, 1.0, 3.0])), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError):
        activation.value("swish", ARGS, x)
