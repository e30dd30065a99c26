"""Normalizing flows on 2-D points: the affine coupling layer, Real NVP, its trainer, the data
sets and the measurements the page shows (notes 004, chapter 11); planar, radial and
continuous-time flows to compare with; Real NVP on the 8 x 8 digits.

    coupling.py   AffineCoupling, SliderCoupling, bound_log_scale, S_MAX   one coupling layer
    realnvp.py    RealNVP, gaussian_log_prob                                the stack
    trainer.py    FlowTrainer, FlowSnapshot                                 maximum likelihood
    data.py       GENERATORS, flow_data, FlowData                           the 2-D data sets
    measures.py   density_grid, nll, inverse_error, logdet_vs_autograd      what the page shows
    reads.py      build_trainer                                             the live factory
    simple.py     PlanarLayer, RadialLayer, SimpleFlow                      planar / radial
    ode.py        ODEField, ODEFlow, hutchinson_trace                       a neural ODE
    compare.py    build_flow, fit_flow, FitResult                           families compared
    digits.py     DigitsRealNVP, bits_per_pixel, sample_digits, ...         Real NVP on digits
"""
from __future__ import annotations

from engine.flows.coupling import S_MAX, AffineCoupling, SliderCoupling, bound_log_scale
from engine.flows.data import GENERATORS, FlowData, flow_data
from engine.flows.measures import (DensityGrid, density_grid, flow_log_prob, grid_points,
                                   inverse_error, logdet_vs_autograd, nll)
from engine.flows.realnvp import RealNVP, gaussian_log_prob
from engine.flows.trainer import FlowSnapshot, FlowTrainer, base_grid_lines

__all__ = ["S_MAX", "AffineCoupling", "SliderCoupling", "bound_log_scale", "GENERATORS",
           "FlowData", "flow_data", "DensityGrid", "density_grid", "flow_log_prob",
           "grid_points", "inverse_error", "logdet_vs_autograd", "nll", "RealNVP",
           "gaussian_log_prob", "FlowSnapshot", "FlowTrainer", "base_grid_lines"]
