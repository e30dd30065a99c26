"""The regression loss curves are PyTorch's losses with their closed-form derivatives."""
import numpy as np
import pytest

from engine.autodiff.loss_curves import REGRESSION_LOSSES, regression_loss_curves


def test_losses_and_their_autograd_slopes():
    e = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 2.0])
    c = regression_loss_curves(REGRESSION_LOSSES, e, delta=1.0)
    np.testing.assert_allclose(c["quadratic"][0], e ** 2)
    np.testing.assert_allclose(c["quadratic"][1], 2 * e)
    np.testing.assert_allclose(c["absolute"][0], np.abs(e))
    np.testing.assert_allclose(c["absolute"][1], np.sign(e))          # torch: 0 at e = 0
    np.testing.assert_allclose(c["huber"][0], np.where(np.abs(e) <= 1, e ** 2 / 2,
                                                       np.abs(e) - 0.5))
    np.testing.assert_allclose(c["huber"][1], np.clip(e, -1, 1))
    wide = regression_loss_curves(["huber"], e, delta=2.0)["huber"][1]
    np.testing.assert_allclose(wide, np.clip(e, -2, 2))
    with pytest.raises(ValueError, match="unknown loss"):
        regression_loss_curves(["hinge"], e)
