"""Representation learning: how clustering methods split toy shapes (scikit-learn's k-means,
Gaussian mixture, spectral, DBSCAN, agglomerative), deep embedded clustering of the digits
trained live on an autoencoder's code, and what unlabelled data buys when labels are few.
Settings -> engine/representations/ -> topics/representations/figures.py.

The constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py. The live view's `draw(view, tick)` builds its
frame with `live_parts(dec_frame_parts, view, **inputs)`: pure, plain values in, parts out."""
from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from engine.representations import LINKAGES, METHOD_NAMES, METHODS, SHAPES, digits_pixels
from engine.representations.contrastive import AUGMENTATIONS, PROBE_LABELS
from engine.weights import WeightsError
from live.controls import live_training
from live.parts import Figure
from live.push import live_parts, place
from topics.representations import figures as figs
from topics.representations.compute import (ALPHAS, CL_LRS, CL_TRAIN_MAX, EPS, GAMMAS,
                                            INTERVALS, LRS, MAP_K, MAP_POINTS,
                                            MAP_REPRESENTATIONS, NOISES, PER_CLASS,
                                            PERPLEXITIES, REPRESENTATIONS, TAUS, TRAIN_MAX,
                                            build_contrastive, build_trainer, clustered,
                                            contrastive_args, contrastive_problem, dec_args,
                                            few_label_accuracy, kmeans_pixels_accuracy,
                                            map_args, probe_baseline, prototypes_of,
                                            spread_args, spread_of, tsne_of)
from topics.representations.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

AUGMENTATION_NAMES = {"shift": "shift", "rotate": "rotate", "crop": "crop and resize",
                      "noise": "noise"}
SHAPE_NAMES = {"blobs": "Blobs", "anisotropic": "Anisotropic blobs", "moons": "Two moons",
               "circles": "Two circles", "varied": "Varied densities"}

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("re_shape", "moons", "Data", kind="selectbox", options=SHAPES,
            format_func=SHAPE_NAMES.get),
    Control("re_n", 1500, "Points", lo=5, hi=1500, step=5),
    Control("re_noise", 0.05, "Noise σ (moons, circles)", kind="select_slider",
            options=NOISES),
    Control("re_k", 0, "Clusters k", kind="selectbox", options=tuple(range(0, 11)),
            format_func=lambda k: "the true number" if k == 0 else str(k)),
    Control("re_eps", 0.3, "DBSCAN radius ε", kind="select_slider", options=EPS),
    Control("re_linkage", "ward", "Agglomerative linkage", kind="selectbox",
            options=LINKAGES),
    Control("re_dec_k", 10, "Clusters k", lo=2, hi=20, step=1),
    Control("re_alpha", 1.0, "Student-t degrees of freedom α", kind="select_slider",
            options=ALPHAS),
    Control("re_lr", 0.003, "Learning rate (Adam)", kind="select_slider", options=LRS),
    Control("re_gamma", 0.0, "Reconstruction weight γ", kind="select_slider",
            options=GAMMAS),
    Control("re_interval", 20, "Target p renewed every", kind="select_slider",
            options=INTERVALS),
    Control("re_per_class", 1, "Labelled digits per class", kind="select_slider",
            options=PER_CLASS),
    Control("re_right", "spread", "Right", kind="segmented", options=("spread", "protos"),
            format_func={"spread": "label spreading", "protos": "prototypes"}.get),
    Control("re_spread_shape", "moons", "2-D data", kind="selectbox",
            options=("moons", "circles", "blobs"), format_func=SHAPE_NAMES.get),
    Control("re_labelled", 1, "Labelled points per class", lo=0, hi=150, step=1),
    Control("re_spread_steps", 5, "Spreading iterations", lo=1, hi=100, step=1),
    Control("re_aug", list(AUGMENTATIONS), "Augmentations", kind="multiselect",
            options=AUGMENTATIONS, format_func=AUGMENTATION_NAMES.get),
    Control("re_tau", 0.2, "Temperature τ", kind="select_slider", options=TAUS),
    Control("re_cl_lr", 0.003, "Learning rate (Adam)", kind="select_slider", options=CL_LRS),
    Control("re_map_n", 300, "Digits in the map", kind="select_slider", options=MAP_POINTS),
    Control("re_perplexity", 30, "t-SNE perplexity", kind="select_slider",
            options=PERPLEXITIES),
])


# ----------------------------------------------------------------------------- views
def shapes_view(panel) -> None:
    with panel.controls:
        for key in ("re_shape", "re_n", "re_noise", "re_k", "re_eps", "re_linkage"):
            STATE.widget(key)
    s = STATE.values()
    with panel.figure:
        with st.spinner("Clustering with five methods..."):
            r = clustered(s)
        if r["problem"]:
            st.info(r["problem"])
            return
        panels = []
        for method in METHODS:
            m = r["methods"][method]
            if "error" in m:
                panels.append((METHOD_NAMES[method], None, "could not run"))
            else:
                panels.append((METHOD_NAMES[method], m["labels"],
                               f"ARI {m['ari']:.2f}<br>{m['seconds'] * 1e3:.0f} ms"))
        show_figure(figs.shapes_figure(r["x"], panels), key="re_fig_shapes")
        failed = [f"{METHOD_NAMES[k]}: {m['error']}" for k, m in r["methods"].items()
                  if "error" in m]
        if failed:
            st.warning("Some methods could not cluster these points. " + " ".join(failed))
    with panel.notes:
        rows = " · ".join(f"{METHOD_NAMES[k]} ARI {m['ari']:.3f}, {m['found']} clusters found"
                          for k, m in r["methods"].items() if "error" not in m)
        explain(f"{len(r['x'])} points, k = {r['k']}. Each panel colours the points by the "
                "cluster one method found (grey: what DBSCAN calls noise). The adjusted Rand "
                "index (ARI) compares a partition with the true clusters: 1 is the same "
                "partition, about 0 no better than chance, whatever the clusters are named. "
                "k-means and the Gaussian mixture (GMM) look for compact blobs; spectral clustering "
                "follows a nearest-neighbour graph; DBSCAN grows dense regions of radius ε; "
                "agglomerative clustering merges the closest groups (its linkage says how "
                f"'closest' is measured). {rows}. Notes 001, L4384.")


def dec_frame_parts(view, read, images, kmeans_pixels) -> dict:
    """One live frame of the DEC tab as parts (pure: the frame route may build it): the codes
    by cluster, the top members per cluster, the accuracy curve and the gradient curve."""
    snap = view.snapshot()
    steps, acc = view.history.as_arrays("accuracy")
    if len(acc) == 0:
        steps, acc = np.array([0]), np.array([snap.accuracy])
    km_code = float(acc[0])                 # the first renewal: k-means' clusters
    grid = np.where(snap.top[..., None, None] >= 0, images[np.maximum(snap.top, 0)], 0.0)
    return {"re_fig_codes": Figure(figs.codes_figure(
                snap.points, snap.cluster, snap.centres,
                f"DEC: {snap.accuracy:.1%} right")),
            "re_fig_members": Figure(figs.members_figure(
                grid, "Top members per cluster")),
            "re_fig_accuracy": Figure(figs.accuracy_figure(
                np.append(steps, view.steps), np.append(acc, snap.accuracy), km_code,
                kmeans_pixels)),
            "re_fig_pull": Figure(figs.pull_figure(snap.q_j, snap.pull_j, snap.j))}


def dec_view(panel) -> None:
    with panel.controls:
        for key in ("re_dec_k", "re_alpha", "re_lr", "re_gamma", "re_interval"):
            STATE.widget(key)
    s = STATE.values()
    seed, device = session.seed(), session.device()
    k, alpha, lr, gamma, interval = dec_args(s)
    with panel.figure:
        try:
            from engine.representations import shipped_state
            shipped_state()
        except WeightsError as e:
            st.warning(f"The pretrained autoencoder is not usable: {e}. DEC needs it.")
            return
        with st.spinner("k-means on the raw pixels..."):
            km_pixels = kmeans_pixels_accuracy(k)
        images = digits_pixels()[0].reshape(-1, 8, 8)
        make = functools.partial(build_trainer, k, alpha, lr, gamma, interval, seed, device)

        def draw(view, tick) -> None:
            parts = live_parts(dec_frame_parts, view, images=images, kmeans_pixels=km_pixels)
            left, right = st.columns(2)
            with left:
                place(parts, "re_fig_codes")
                place(parts, "re_fig_accuracy")
            with right:
                place(parts, "re_fig_members")
                place(parts, "re_fig_pull")

        with user_errors("train DEC"):
            live_training("re_dec", make, draw,
                          config={"k": k, "alpha": alpha, "lr": lr, "gamma": gamma,
                                  "interval": interval, "seed": seed, "device": device},
                          steps_per_frame=5, max_steps_per_frame=100)
    with panel.notes:
        explain("A small autoencoder (64 → 128 → 10 → 128 → 64), pretrained on the 1,797 "
                "digits without their labels, gives each digit a 10-D code z_i; k-means on the "
                "codes places k centres μ_j. DEC then softly assigns each code to each centre "
                "with a Student-t kernel, q_ij ∝ (1 + |z_i − μ_j|²/α)^(−(α+1)/2), sharpens "
                "these into a target p_ij ∝ q_ij² / Σ_i q_ij, and trains encoder and centres "
                "to make Q match P (KL(P‖Q), target renewed every few iterations). Top left: "
                "the codes on the two principal axes of the pretrained code (fixed, so the "
                "motion is DEC's); bottom left: cluster accuracy, each cluster matched to one "
                f"digit by the Hungarian method, beside k-means on the code and on the raw "
                f"pixels ({km_pixels:.1%}); bottom right: how hard the loss pulls each code "
                "toward the largest cluster's centre against its q: confident members pull "
                "most. γ > 0 keeps the reconstruction loss on. Notes 001, L4686-L4822.")


def _few_curves(progress=None) -> dict[str, list[float]]:
    curves: dict[str, list[float]] = {}
    total, done = len(REPRESENTATIONS) * len(PER_CLASS), 0
    for key in REPRESENTATIONS:
        curves[key] = []
        for n in PER_CLASS:
            curves[key].append(few_label_accuracy(key, n))
            done += 1
            if progress is not None:
                progress.progress(done / total, text=f"Fitting classifiers: {done}/{total}")
    return curves


def _prototypes(per_class: int) -> None:
    r = prototypes_of(per_class)
    show_figure(figs.prototypes_figure(
        r["points"], r["nearest"], r["support"], r["support_y"], r["protos"], r["classes"],
        f"Nearest prototype: {r['accuracy']:.1%} right"), key="re_fig_protos")


def _spreading(s) -> None:
    r = spread_of(*spread_args(s))
    if r["problem"]:
        st.info(f"Label spreading: {r['problem']}. Label at least one point per class and "
                "leave some unlabelled.")
        return
    show_figure(figs.spread_figure(
        r["x"], r["predicted"], r["confidence"], r["labelled"], r["y"],
        f"After {int(s['re_spread_steps'])} iterations: {r['accuracy']:.1%} right"),
        key="re_fig_spread")


def few_view(panel) -> None:
    with panel.controls:
        STATE.widget("re_per_class")
        st.divider()
        STATE.widget("re_right")
        if STATE.values()["re_right"] == "spread":
            STATE.widget("re_spread_shape")
            STATE.widget("re_labelled")
            STATE.widget("re_spread_steps")
    s = STATE.values()
    marked = int(s["re_per_class"])
    with panel.figure:
        left, right = st.columns(2)
        with left:
            bar = st.progress(0.0, text="Fitting classifiers...")
            curves = _few_curves(bar)
            bar.empty()
            show_figure(figs.few_labels_figure(PER_CLASS, curves, REPRESENTATIONS, marked),
                        key="re_fig_few")
        with right:
            if s["re_right"] == "protos":
                _prototypes(marked)
            else:
                _spreading(s)
    with panel.notes:
        at = {k: curves[k][PER_CLASS.index(marked)] for k in curves}
        explain(f"Left: with {marked} labelled digit{'s' if marked > 1 else ''} per class "
                f"(from a 70% training split; accuracy on the other 30%, mean of 3 draws) a "
                f"logistic regression on raw pixels gets {at['pixels']:.1%}, on the "
                f"autoencoder's 10-D code {at['code']:.1%}: a code learned to reconstruct is "
                "not automatically a better input for a classifier; on the features of the "
                f"SimCLR encoder (Contrastive tab, trained without labels) {at['contrastive']:.1%}. "
                "Label spreading uses the "
                f"unlabelled digits too and gets {at['spread']:.1%}: it lets labels flow along "
                "a nearest-neighbour graph of all digits, so a digit takes the label of its "
                "cluster. Right, label spreading: the same on 2-D points, drawn after a given "
                "number of iterations of F ← αSF + (1 − α)Y (diamonds: the labelled points; "
                "grey: not reached yet). Right, prototypes: each class's prototype is the "
                "mean code of its labelled digits (stars), and a held-out digit takes the "
                "class of the nearest one, measured in the 10-D code; drawn on its two "
                "principal axes. Notes 004, Fig. 13.2, 13.4 and 13.20.")


def simclr_frame_parts(view, read, code: float, pixels: float) -> dict:
    """One live frame of the contrastive tab as parts (pure): the augmented pairs, the
    similarity matrix of their projections, the loss curve and the probe's accuracy curve."""
    snap = view.snapshot()
    loss_steps, loss = view.history.as_arrays("loss")
    probe_steps, probe = view.history.as_arrays("probe")
    grid = np.concatenate([snap.originals[None], snap.views])              # (3, m, 8, 8)
    return {"re_fig_pairs": Figure(figs.members_figure(
                grid, "Digits (top) and two augmented views of each")),
            "re_fig_similarity": Figure(figs.similarity_figure(
                snap.similarity, f"Cosine similarity of the projections, NT-Xent "
                                 f"{snap.loss:.2f}")),
            "re_fig_cl_loss": Figure(figs.contrastive_loss_figure(loss_steps, loss)),
            "re_fig_probe": Figure(figs.probe_figure(
                *_with_now(probe_steps, probe, view.steps, snap.probe), code, pixels,
                PROBE_LABELS))}


def _with_now(steps: np.ndarray, values: np.ndarray, now: int, value: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """The logged curve with the current iteration's value added unless it is logged."""
    if len(steps) and int(steps[-1]) == int(now):
        return steps, values
    return np.append(steps, now), np.append(values, value)


def contrastive_view(panel) -> None:
    with panel.controls:
        for key in ("re_aug", "re_tau", "re_cl_lr"):
            STATE.widget(key)
    s = STATE.values()
    seed, device = session.seed(), session.device()
    kinds, tau, lr = contrastive_args(s)
    with panel.figure:
        problem = contrastive_problem(s)
        if problem:
            st.info(f"Contrastive learning: {problem}")
            return
        with st.spinner("The probe on the autoencoder's code and on raw pixels..."):
            code, pixels = probe_baseline("code"), probe_baseline("pixels")
        make = functools.partial(build_contrastive, kinds, tau, lr, seed, device)

        def draw(view, tick) -> None:
            parts = live_parts(simclr_frame_parts, view, code=code, pixels=pixels)
            left, right = st.columns(2)
            with left:
                place(parts, "re_fig_pairs")
                place(parts, "re_fig_cl_loss")
            with right:
                place(parts, "re_fig_similarity")
                place(parts, "re_fig_probe")

        with user_errors("train SimCLR"):
            live_training("re_simclr", make, draw,
                          config={"kinds": kinds, "tau": tau, "lr": lr, "seed": seed,
                                  "device": device},
                          steps_per_frame=5, max_steps_per_frame=50)
    with panel.notes:
        explain("SimCLR learns features without labels: each digit of a minibatch is "
                "augmented twice (shifted, rotated, cropped and resized, noised: top left, "
                "a fixed draw), an encoder f (64 → 256 → 32) gives each view its features h "
                "and a projection head g (32 → 256 → 32) its z. The NT-Xent loss asks each "
                "view to pick its partner among all 2B − 1 other views of the batch: "
                "ℓ_i = −log(exp(s_i,p(i)/τ) / Σ_k≠i exp(s_ik/τ)), s the cosine similarity "
                "of the z. Top right: s_ik for 8 digits' two views; the partners sit on the "
                "two off-centre diagonals and turn red as training goes on. Bottom right: a "
                f"logistic regression (the linear probe) fitted to {PROBE_LABELS} labelled "
                "digits per class on h, its accuracy on held-out digits, against the same "
                f"probe on the autoencoder's code ({code:.1%}) and on raw pixels "
                f"({pixels:.1%}). Notes 004, Fig. 13.11 and 13.12.")


def maps_view(panel) -> None:
    with panel.controls:
        STATE.widget("re_map_n")
        STATE.widget("re_perplexity")
    s = STATE.values()
    n, perplexity = map_args(s)
    with panel.figure:
        bar = st.progress(0.0, text="t-SNE...")
        maps = {}
        for i, key in enumerate(MAP_REPRESENTATIONS):
            bar.progress(i / len(MAP_REPRESENTATIONS),
                         text=f"t-SNE of the {MAP_REPRESENTATIONS[key]} ({i + 1}/3), "
                              "computed once per setting...")
            maps[key] = tsne_of(key, n, perplexity)
        bar.empty()
        problem = next((m["problem"] for m in maps.values() if m["problem"]), None)
        if problem:
            st.info(f"t-SNE: {problem}. Map more digits or lower the perplexity.")
            return
        show_figure(figs.scatter_panels(
            [(name, maps[key]["points"], maps[key]["y"],
              f"{MAP_K}-NN accuracy in the map {maps[key]['knn']:.1%}")
             for key, name in MAP_REPRESENTATIONS.items()], height=420), key="re_fig_maps")
    with panel.notes:
        rows = ", ".join(f"{name} {maps[key]['knn']:.1%}"
                         for key, name in MAP_REPRESENTATIONS.items())
        explain(f"t-SNE maps of {n} digits (a fixed random draw), coloured by their true "
                "digit, which none of the three representations was given: the features of "
                "the shipped SimCLR encoder (trained without labels, as on the previous tab), "
                "the autoencoder's 10-D code and the raw 64 pixels. t-SNE places points so that "
                "near neighbours stay near (the perplexity is about how many neighbours count); "
                "the distances between clusters mean little. The score under each map: the "
                f"share of digits whose {MAP_K} nearest neighbours in the 2-D map have the "
                f"same digit by majority: {rows}. Notes 004, Fig. 13.10; notes 001, L4822.")


VIEWS = [View("shapes", "Clustering shapes", shapes_view),
         View("dec", "Deep clustering (DEC)", dec_view, live=Live("re_dec", train_max=TRAIN_MAX)),
         View("contrastive", "Contrastive (SimCLR)", contrastive_view,
              live=Live("re_simclr", train_max=CL_TRAIN_MAX)),
         View("maps", "t-SNE maps", maps_view),
         View("few", "Few labels", few_view)]

if __name__ == "__main__":
    topic_page("representations", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"q_{ij}=\frac{(1+\|z_i-\mu_j\|^2/\alpha)^{-\frac{\alpha+1}{2}}}"
                       r"{\sum_{j'}(1+\|z_i-\mu_{j'}\|^2/\alpha)^{-\frac{\alpha+1}{2}}},\quad "
                       r"p_{ij}=\frac{q_{ij}^2/f_j}{\sum_{j'}q_{ij'}^2/f_{j'}}")
