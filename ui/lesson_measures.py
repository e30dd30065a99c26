"""The measurements a lesson file's claims may name ("<page>.<function>"): each is a function
of the page's full settings s (and keyword arguments from the file) that returns the number
the page draws from, the same functions the pages' own presets and tour steps use.

A lesson file can only pick from this table: it names a measurement, it never carries code.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Measure:
    name: str          # "<page>.<function>"
    module: str        # the topic module that defines it
    function: str
    slow: bool = False  # trains a model: its claim is a slow test

    @cached_property
    def func(self) -> Callable[..., float]:
        return getattr(importlib.import_module(self.module), self.function)

    def bind(self, args: Mapping[str, Any]) -> None:
        """TypeError unless `args` are keyword arguments the function takes."""
        inspect.signature(self.func).bind({}, **args)

    def measure(self, args: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], float]:
        args = dict(args)
        return lambda s: float(self.func(s, **args))


# page -> (fast measurement functions of topics/<page>/compute.py, ones that train a model)
_TABLE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gradient_descent": (("gap", "steps_to", "eigen_flip_share", "tail_rate",
                          "mean_late_step", "diverged_at", "schedule_peak_step", "schedule_value",
                          "schedule_restarts", "schedule_restart", "eigen_axis_angle",
                          "hessian_eigenvalue", "taylor_gap", "taylor_newton_gap"), ()),
    "convolution": (("near_zero_share", "brightness_change", "detail_ratio", "size_ratio",
                     "shrink", "field", "weights_per_c2", "field_growth", "erf_ratio",
                     "central_mass", "predicted_right"), ()),
    "attention": (("above_diagonal", "row_sum_error", "permutation_error_of",
                   "entries_per_n_sqrt_n", "two_hop_coverage", "shown_mass",
                   "example_accuracy", "copy_layer1_mass"), ()),
    "backpropagation": (("grad", "torch_gap", "node_value", "sigmoid_local",
                         "max_abs_grad", "regression_loss_at"), ()),
    "lstm_gating": (("accuracy_at", "unit_forget_over_delay", "unit_cell_at_query",
                     "unit_input_gate_jump", "unit_output_gate_jump", "max_abs_cell",
                     "clamped_acc", "rnn_fall", "orders_lstm_over_rnn", "orders_fb2_over_fb0",
                     "unclipped_growth", "clipped_max", "f_at_rest", "half_life",
                     "flow_at"), ()),
    "relu_regions": (("arrangement_count", "bent_units", "budget_mean", "budget_bound",
                      "sawtooth_pieces"), ()),
    "initialization": (("act_ratio", "end_over_first", "spread", "last_var",
                        "grad_in_over_out", "chi_error", "spectrum_condition"),
                       ("he_over_small",)),
    "diffusion": (("near_share", "langevin_weights"), ()),
    "gan": (("dirac_ratio", "dirac_theta_swing", "dirac_min_distance", "g_loss_slope",
             "oc_value"), ("modes_at", "max_modes_at")),
    "vae": (("nearest_mode_gap", "code_centre"), ("off_digit_share", "code_reach",
                                                  "grid_spread", "ae_over_pca")),
    "generalization": (("poly_mse", "poly_best_degree", "poly_max_gap"), ("gap_at", "overfit_measure", "val_loss_growth", "best_step",
                            "random_measure", "memorization_slowdown", "decay_measure",
                            "norm_ratio", "norm_vs_unregularized", "peak_offset",
                            "peak_ratio")),
    "adversarial": (("fgsm_minus_pgd", "fooled", "kept", "curve_at"), ()),
    "flows": (("coupling_value", "start_integral"), ("trained_value",)),
}

# lesson-only measurements (topics/lesson_probes.py): page -> probe function names
_PROBES: dict[str, tuple[str, ...]] = {
    "relu_regions": ("relu_random_pieces", "relu_random_slope_sign_changes"),
    "attention": ("attention_mask_share", "attention_mask_future", "attention_pe_error",
                  "attention_pe_range", "attention_pe_period", "attention_pe_crossings"),
    "vae": ("vae_posterior_modes", "vae_pca_residual_share"),
    "diffusion": ("diffusion_alpha_bar",),
    "gan": ("gan_lines_distance",),
    "initialization": ("initialization_last_rank", "initialization_rank_at",
                       "initialization_max_slope", "initialization_slope_at"),
    "convolution": ("convolution_equivariance_error", "convolution_slide_kept_share",
                    "convolution_slide_out_side", "convolution_slide_torch_error",
                    "convolution_transposed_backprop_error"),
}

MEASURES: dict[str, Measure] = {
    f"{page}.{fn}": Measure(f"{page}.{fn}", f"topics.{page}.compute", fn, slow)
    for page, (fast, trained) in _TABLE.items()
    for slow, names in ((False, fast), (True, trained)) for fn in names
}
MEASURES.update({f"{page}.{fn}": Measure(f"{page}.{fn}", "topics.lesson_probes", fn)
                 for page, names in _PROBES.items() for fn in names})
