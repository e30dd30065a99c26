"""Polynomial regression of the 1-D toy set: least squares that agrees with numpy's own
polynomial fit, interpolation at degree n − 1, and the training error falling with the degree."""
import numpy as np

from engine.generalization import polyfit


def test_fit_is_the_least_squares_polynomial():
    data = polyfit.toy_regression(20, 0.2, seed=0)
    coef = polyfit.fit(data.x_train, data.y_train, 5)
    ref = np.polynomial.Polynomial.fit(data.x_train, data.y_train, 5)
    grid = np.linspace(0, 1, 101)
    np.testing.assert_allclose(polyfit.predict(coef, grid), ref(grid), atol=1e-9)


def test_degree_n_minus_one_interpolates_and_training_error_falls_with_degree():
    data = polyfit.toy_regression(13, 0.2, seed=3)
    coef = polyfit.fit(data.x_train, data.y_train, 12)
    np.testing.assert_allclose(polyfit.predict(coef, data.x_train), data.y_train, atol=1e-9)
    sweep = polyfit.degree_sweep(data, 12)
    assert np.all(np.diff(sweep.train_mse) <= 1e-12)          # nested least squares
    assert sweep.train_mse[-1] < 1e-18 and sweep.val_mse[-1] > 10 * sweep.val_mse.min()
    assert data.x_val.size == 50 and np.all((data.x_val >= 0) & (data.x_val <= 1))
