"""The errors of gradients: disconnected or undefined where asked not to be, and ``verify_grad``'s."""

from __future__ import annotations


class DisconnectedInputError(ValueError):
    """The cost does not depend on a variable of ``wrt`` (``disconnected_inputs="raise"``)."""


class NullTypeGradError(TypeError):
    """A gradient is undefined (``null_gradients="raise"``)."""


class GradientError(AssertionError):
    """``verify_grad`` found analytic and numeric gradients that disagree."""

    def __init__(self, arg, err_pos, shape, val1, val2, abs_err, rel_err, abs_tol, rel_tol):
        super().__init__(
            f"Gradient of input {arg} differs from finite differences at flat index {err_pos} "
            f"(input shape {shape}): analytic {val1}, numeric {val2}; absolute error {abs_err:.3g} "
            f"(tolerance {abs_tol:.3g}), relative error {rel_err:.3g} (tolerance {rel_tol:.3g})")
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.val1, self.val2, self.abs_err, self.rel_err = val1, val2, abs_err, rel_err
