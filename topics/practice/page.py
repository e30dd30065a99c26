"""Training in practice: what practitioners do around a trained net. Uncertainty (a deep
ensemble's and MC dropout's predictive band on 1-D regression with a gap; SVGD particles
fitting a bimodal density), hyperparameter search (grid, random and Bayesian optimisation with
one budget), iterative magnitude pruning to a lottery ticket, trained live, and distillation
(a student on hard labels vs a teacher's soft targets at temperature T).
Settings -> engine/practice/ -> topics/practice/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): STATE, one function per view, and the footer. The
constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py."""
from __future__ import annotations

import functools
import math

import numpy as np
import streamlit as st

from engine.practice import search as hp
from engine.practice import svgd, uncertainty
from engine.practice.reads import rounds_of
from live.controls import live_training, read_trainer
from live.parts import Caption, Figure, Info, Metrics
from live.push import live_parts, place
from topics.practice import figures as figs
from topics.practice.compute import (BANDWIDTHS, DROPS, LABELS, METHODS, N_POINTS, NOISE,
                                     RATES, REWINDS, ROUND_STEPS, SEEDS, TARGET,
                                     TEMPERATURES, TOL, TRAIN_MAX, band_from, curves,
                                     distill_from, make_trainer, pruning_args, search_from,
                                     svgd_of, targets_of)
from topics.practice.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("pr_method", "deep ensemble", "Method", kind="radio", options=list(METHODS)),
    Control("pr_members", 5, "Ensemble members", lo=1, hi=10, step=1,
            help="Each member is the same MLP from its own random initialisation."),
    Control("pr_drop", 0.1, "Dropout rate (MC dropout)", kind="select_slider",
            options=list(DROPS)),
    Control("pr_particles", 50, "Particles", lo=1, hi=200, step=1),
    Control("pr_bandwidth", "median", "Kernel bandwidth h", kind="select_slider",
            options=list(BANDWIDTHS),
            help="k(a, b) = exp(−(a − b)²/h); 'median': med²/log n, recomputed each step."),
    Control("pr_svgd_iter", 500, "Show iteration", lo=0, hi=500, step=10),
    Control("pr_budget", 16, "Budget (trials)", kind="number", lo=0, hi=10_000, step=1),
    Control("pr_search_seed", 0, "Random seed of the search", lo=0, hi=19, step=1),
    Control("pr_bayes", True, "Bayesian optimisation too", kind="checkbox"),
    Control("pr_rate", 0.3, "Pruned per round", kind="select_slider", options=list(RATES),
            help="The share of the remaining weights each round removes, layer by layer."),
    Control("pr_rewind", 0, "Rewind to iteration", kind="select_slider",
            options=list(REWINDS), help="0: the initial weights (the original lottery "
                                        "ticket); later: an early weight of the dense run."),
    Control("pr_round_steps", 100, "Iterations per round", kind="select_slider",
            options=list(ROUND_STEPS)),
    Control("pr_labels", 100, "Labelled digits for the students", kind="select_slider",
            options=list(LABELS)),
    Control("pr_T", 4.0, "Temperature T", kind="select_slider", options=list(TEMPERATURES)),
    Control("pr_digit", 0, "Test digit shown", lo=0, hi=29, step=1),
])


# ----------------------------------------------------------------------------- views
def uncertainty_view(panel) -> None:
    with panel.controls:
        STATE.widget("pr_method")
        STATE.widget("pr_members")
        STATE.widget("pr_drop")
        st.caption("Notes 004, Fig. 4.13: a predictive band on 1-D regression.")
    s = STATE.values()
    x, y = uncertainty.gap_data(N_POINTS, NOISE, 0)
    with panel.figure, user_errors("fit the models"):
        if s["pr_method"] == "deep ensemble" and int(s["pr_members"]) < 2:
            st.warning("One member gives one curve: an ensemble needs at least 2 members to "
                       "disagree, so there is no band. Showing 2 members.")
            s = {**s, "pr_members": 2}
        if s["pr_method"] == "MC dropout" and float(s["pr_drop"]) <= 0:
            st.warning("Dropout 0 switches MC dropout off: every pass is the same network, so "
                       "the band collapses to a line. Showing dropout 0.05.")
            s = {**s, "pr_drop": 0.05}
        with st.spinner("Training the networks…"):
            b = band_from(s)
        what = (f"{int(s['pr_members'])} members" if s["pr_method"] == "deep ensemble"
                else f"dropout {float(s['pr_drop']):g}, 100 passes")
        show_figure(figs.band_figure(b.xs, b.mean, b.std, b.samples, x, y,
                                     uncertainty.target(b.xs), uncertainty.X_IN,
                                     f"{s['pr_method']} ({what})"), key="pr_fig_band")
        m = st.columns(4)
        m[0].metric("σ inside the data", f"{b.width_in:.3f}")
        m[1].metric("σ in the gap", f"{b.width_gap:.3f}")
        m[2].metric("gap / data", f"{b.width_ratio:.2f}×",
                    help="Mean σ over |x| < 1 divided by mean σ over 1 ≤ |x| ≤ 3.")
        m[3].metric("σ beyond the data", f"{b.width_out:.3f}", help="3 < |x| ≤ 4.5")
    with panel.notes:
        st.latex(r"\mu(x)=\frac1K\sum_k f_k(x),\qquad \sigma^2(x)=\frac1K\sum_k "
                 r"\big(f_k(x)-\mu(x)\big)^2")
        explain(f"{N_POINTS} points on 1 ≤ |x| ≤ 3 with noise σ = {NOISE}, none in the gap "
                "|x| < 1. Every network is an MLP 1 → 32 → 32 → 1 (tanh) trained 400 full-batch "
                "Adam steps on the squared error. The deep ensemble's members differ only in "
                "their initialisation; where data pins them down they agree, in the gap and "
                "beyond the data each extrapolates its own way, so σ grows. MC dropout keeps "
                "dropout on at prediction and averages 100 passes: its spread comes from the "
                "dropped units, much the same everywhere, so it widens far less in the gap. "
                "The band is μ ± 2σ: the spread between models, not the noise of the data.")


def svgd_view(panel) -> None:
    with panel.controls:
        STATE.widget("pr_particles")
        STATE.widget("pr_bandwidth")
        STATE.widget("pr_svgd_iter")
        st.caption("Notes 004, Fig. 4.12: SVGD particles approximating a 1-D density.")
    s = STATE.values()
    with panel.figure, user_errors("move the particles"):
        n = int(s["pr_particles"])
        if n < 2:
            st.warning("One particle feels no repulsion: SVGD then is plain gradient ascent "
                       "on log p and the particle sits on a mode, it cannot describe a "
                       "density. Showing 2 particles.")
            n = 2
        run = svgd_of(n, s["pr_bandwidth"])
        i = int(np.searchsorted(run.iterations, int(s["pr_svgd_iter"])))
        i = min(i, len(run.iterations) - 1)
        x = run.frames[i]
        grid = np.linspace(-12, 6, 361)
        show_figure(figs.svgd_figure(grid, TARGET.density(grid), svgd.kde(x, grid), x,
                                     int(run.iterations[i]), float(run.bandwidths[i])),
                    key="pr_fig_svgd")
        m = st.columns(3)
        m[0].metric("share right of 0", f"{svgd.mode_share(x):.0%}",
                    help=f"The target puts {1 - TARGET.w:.0%} of its mass in the right mode.")
        m[1].metric("particles' mean", f"{x.mean():.2f}",
                    help=f"Target: {TARGET.mean:.2f}")
        m[2].metric("particles' std", f"{x.std():.2f}",
                    help=f"Target: {TARGET.std:.2f}")
    with panel.notes:
        st.latex(r"x_i \leftarrow x_i + \frac{\epsilon}{n}\sum_j \Big[k(x_j,x_i)\,\nabla\log "
                 r"p(x_j) + \nabla_{x_j} k(x_j,x_i)\Big]")
        explain("The particles start around −10, far from p(x) = ⅓ N(−2, 1) + ⅔ N(2, 1), "
                f"and take {500} steps of size 0.5. The first term drags each particle up the "
                "density, smoothed over its neighbours; the second pushes particles apart, so "
                "they spread over p instead of piling onto a mode. Move **Show iteration** to "
                "watch them travel. A tiny bandwidth switches the repulsion off (they stay "
                "stuck in the first mode they reach); the median heuristic sets h from the "
                "particles' own spread.")


def search_view(panel) -> None:
    with panel.controls:
        STATE.widget("pr_budget")
        STATE.widget("pr_search_seed")
        STATE.widget("pr_bayes")
        st.caption("Notes 004, Fig. 4.20 and notes 001, L6877: grid vs random search.")
    s = STATE.values()
    with panel.figure, user_errors("run the searches"):
        if int(s["pr_budget"]) < 1:
            st.warning("A budget of 0 trials tries nothing: showing a budget of 1.")
            s = {**s, "pr_budget": 1}
        with st.spinner("Searching…"):
            r = search_from(s)
        if r.message:
            st.info(r.message)
        axis = np.linspace(0, 1, 101)
        uu, vv = np.meshgrid(axis, axis, indexing="ij")
        show_figure(figs.search_figure(hp.score(uu, vv), axis, r.runs, hp.U_STAR),
                    key="pr_fig_search")
        cols = st.columns(len(r.runs))
        for c, (m, run) in zip(cols, r.runs.items()):
            med = r.median_trials[m]
            c.metric(f"{m}: best score", f"{run.best_so_far[-1]:.3f}",
                     help=f"Maximum {hp.BEST:.2f}. {run.distinct_u} distinct values of u tried.")
            c.caption(f"median trials to |u − u*| ≤ {TOL}: "
                      + (f"**{med:g}**" if math.isfinite(med) else "**never**"))
    with panel.notes:
        st.latex(r"\mathrm{score}(u, v) = e^{-(u-u^*)^2/2w^2} + 0.08\,v(1-v)")
        explain(f"u matters (a narrow peak at u* = {hp.U_STAR}), v hardly does. A grid of B "
                "trials spends them on a √B × √B lattice and so tries only √B values of u; "
                "random search tries B different values of u with the same budget. The medians "
                f"are over {SEEDS} random seeds (5 for Bayesian optimisation). Bayesian "
                "optimisation fits a Gaussian process to the trials so far and takes the point "
                "of largest expected improvement next. Grid and random search are capped at "
                f"{hp.MAX_BUDGET} trials, Bayesian optimisation at {hp.MAX_BUDGET_BO}.")


def pruning_frame_parts(view, read, dense_note: str, rate: float) -> dict:
    """One live frame (pure): the ticket's thinning weight matrix and accuracy vs kept."""
    snap = view.snapshot()
    recs = snap.rounds
    dense = recs[0].accuracy["ticket"] if recs else None
    out = {"pr_fig_lottery": Figure(figs.lottery_figure(snap.weights, curves(recs) if recs
                                                        else {}, dense, snap.kept, rate)),
           "pr_metrics": Metrics([
               ("Round", f"{snap.round}", "Each round trains, then prunes and rewinds."),
               ("Weights kept", f"{snap.kept:.1%}", "Share of both layers' weights."),
               ("Ticket now", f"{snap.accuracy['ticket']:.1%}", "Test accuracy (597 digits)."),
               ("Random mask now", f"{snap.accuracy['random']:.1%}", "Same fraction kept.")])}
    if recs:
        last = recs[-1]
        out["pr_caption"] = Caption(
            f"Round {last.round} ({last.kept:.1%} kept): ticket {last.accuracy['ticket']:.1%}, "
            f"re-initialised {last.accuracy['reinit']:.1%}, random mask "
            f"{last.accuracy['random']:.1%}; test accuracy peaked at iteration "
            f"{last.stop['ticket']} / {last.stop['reinit']} / {last.stop['random']} of the "
            f"round. {dense_note}")
    else:
        out["pr_caption"] = Info("Press **Play**: each round trains the three networks, then "
                                 "prunes the ticket and rewinds it.",
                                 icon=":material/play_arrow:")
    return out


def pruning_view(panel) -> None:
    with panel.controls:
        STATE.widget("pr_rate")
        STATE.widget("pr_rewind")
        STATE.widget("pr_round_steps")
        st.caption("Notes 001, L6690, L6836, L6843: pruning and lottery tickets.")
    s = STATE.values()
    rate, round_steps, rewind = pruning_args(s)
    with panel.figure, user_errors("prune the network"):
        if rate <= 0 or rate >= 1:
            st.warning(f"Pruning {rate:.0%} per round "
                       + ("removes nothing: the network stays dense." if rate <= 0 else
                          "removes every weight: nothing is left to train.")
                       + " Choose a rate between 10% and 50%.")
            return
        seed, device = session.seed(), session.device()
        make = functools.partial(make_trainer, rate, round_steps, rewind, seed, device)
        note = f"MLP 64 → 64 → 10 on the digits, {rate:.0%} pruned per round, seed {seed}."

        def draw(view, tick) -> None:
            parts = live_parts(pruning_frame_parts, view, dense_note=note, rate=rate)
            for slot in ("pr_fig_lottery", "pr_metrics", "pr_caption"):
                place(parts, slot)

        live_training("pr_train", make, draw,
                      config={"rate": rate, "round_steps": round_steps, "rewind": rewind,
                              "seed": seed, "device": device},
                      steps_per_frame=20, max_steps_per_frame=200)
    with panel.notes:
        st.latex(r"M \leftarrow M \odot \big[\,|w| > q_{p}(|w|)\,\big],\qquad "
                 r"w \leftarrow M \odot \theta_{r}")
        explain("Three copies of an MLP 64 → 64 → 10 train side by side on 1,200 of "
                "scikit-learn's 8 × 8 digits (full-batch Adam), tested on the other 597. At "
                "the end of each round the ticket drops the given share of its remaining "
                "weights with the smallest magnitude, layer by layer, and its survivors go back "
                "to their values at the rewind iteration. The second copy keeps the same mask "
                "but draws new weights; the third gets a random mask of the same size. Pruned "
                "weights get no gradient and stay exactly 0 (blank in the matrix).")
        with st.expander("Round by round: accuracy and where it peaked (notes 001, L6843)"):
            rounds_table()


def rounds_table() -> None:
    """The finished rounds of the live trainer, read when asked for."""
    if not st.button("Read the rounds so far", key="pr_rounds"):
        st.caption("Each row: the fraction kept, each network's test accuracy at the round's "
                   "end, and the iteration of the round at which it was highest.")
        return
    with user_errors("read the rounds"):
        rows = read_trainer("pr_train", rounds_of)
        if not rows:
            st.info("No finished round yet: press Play on this tab first.")
            return
        st.dataframe(rows, hide_index=True)


def distill_view(panel) -> None:
    with panel.controls:
        STATE.widget("pr_labels")
        STATE.widget("pr_T")
        STATE.widget("pr_digit")
        st.caption("Notes 001, L6564: student accuracy under distillation.")
    s = STATE.values()
    with panel.figure, user_errors("distil the teacher"):
        with st.spinner("Training the teacher and two students…"):
            d = distill_from(s)
            _, label, targets = targets_of(int(s["pr_digit"]))
        show_figure(figs.distill_figure(d.steps, d.hard, d.soft, d.teacher_accuracy,
                                        targets, TEMPERATURES, label, float(s["pr_T"])),
                    key="pr_fig_distill")
        m = st.columns(3)
        m[0].metric("teacher", f"{d.teacher_accuracy:.1%}", help="Trained on 1,200 digits.")
        m[1].metric("student, hard labels", f"{d.hard[-1]:.1%}")
        m[2].metric("student, soft targets", f"{d.soft[-1]:.1%}",
                    delta=f"{100 * (d.soft[-1] - d.hard[-1]):+.1f} points")
    with panel.notes:
        st.latex(r"L = \alpha\,T^2\,\mathrm{KL}\big(\mathrm{softmax}(t/T)\,\|\,"
                 r"\mathrm{softmax}(s/T)\big) + (1-\alpha)\,\mathrm{CE}(s, y),\quad \alpha=0.9")
        explain("The teacher, an MLP 64 → 128 → 10, learns from all 1,200 training digits. "
                "Two students, MLPs 64 → 16 → 10 from the same initialisation, see only the "
                "first few labelled digits and train 300 full-batch Adam steps: one on the "
                "labels, one mostly on the teacher's probabilities at temperature T. A high T "
                "flattens those probabilities (right) so the student also learns which wrong "
                "classes look alike: that is the extra information a one-hot label lacks.")


VIEWS = [View("uncertainty", "Uncertainty", uncertainty_view),
         View("svgd", "SVGD particles", svgd_view),
         View("search", "Hyperparameter search", search_view),
         View("pruning", "Pruning & lottery tickets", pruning_view,
              live=Live("pr_train", train_max=TRAIN_MAX)),
         View("distill", "Distillation", distill_view)]

if __name__ == "__main__":
    topic_page("practice", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\mu(x)=\tfrac1K\textstyle\sum_k f_k(x),\quad "
                       r"M \leftarrow M\odot[\,|w|>q\,],\quad x_i \mathrel{+}= \epsilon\,\phi(x_i)")
