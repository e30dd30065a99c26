"""Training in practice: the page's maths, free of any UI (engine/ never imports Streamlit or
Plotly).

    uncertainty.py   1-D regression with a gap: deep ensemble and MC dropout bands
    svgd.py          Stein variational gradient descent on a 1-D bimodal density
    search.py        grid, random and Bayesian-optimisation hyperparameter search
    pruning.py       iterative magnitude pruning with rewinding: LotteryTrainer (live)
    distill.py       knowledge distillation: hard-label vs soft-target students"""
from __future__ import annotations

from engine.practice.pruning import ARMS, LotteryTrainer, magnitude_mask, random_mask
from engine.practice.search import run_search
from engine.practice.svgd import Mixture, run_svgd, svgd_direction
from engine.practice.uncertainty import ensemble_band, gap_data, mc_dropout_band

__all__ = ["ARMS", "LotteryTrainer", "Mixture", "ensemble_band", "gap_data",
           "magnitude_mask", "mc_dropout_band", "random_mask", "run_search", "run_svgd",
           "svgd_direction"]
