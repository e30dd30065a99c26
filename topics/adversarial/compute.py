"""The adversarial page's computations of the settings dict s (topics/adversarial/page.py): the
shipped CNNs, attacks on one digit and on the held-out digits, robustness curves, the linear
explanation, and the measurements the claims read (each also shown on the page). Shared by the
views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine import adversarial as adv
from engine.adversarial.training import SNAPSHOTS, heldout_digits, model_from_weights
from ui.weights import cached_weights
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
N_HELDOUT = 359
GALLERY = 36                                   # held-out digits shown for clicking
CURVE_EPS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2)
LIVE_EPS = (0.0, 0.05, 0.1, 0.125, 0.15, 0.2)
L2_SCALE = 8.0                                 # sqrt(64): L2 length of moving all pixels by eps
LINEAR_DIMS = tuple(sorted({int(round(v)) for v in np.geomspace(1, 100_000, 16)} | {64}))
CLAIM_EPS = 0.125
GREY_STEPS = 16                                # the digits' pixels are grey levels 0..16 / 16
MODELS = ("standard", "robust")
MODEL_LABELS = {"standard": "Standard", "robust": "Robust"}
ATTACKS = ("fgsm", "pgd", "pgd_l2")
ATTACK_LABELS = {"fgsm": "FGSM", "pgd": "PGD", "pgd_l2": "PGD L2"}
TARGETS = [-1, *range(10)]
TRAIN_ATTACKS = {"pgd": "PGD-7", "fgsm": "FGSM", "none": "clean"}


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def model_of(name: str, device: str = "cpu"):
    """The shipped CNN `name`, built from the shared cached weights loader (a few ms)."""
    return model_from_weights(cached_weights(SNAPSHOTS[name], device), device)


def model_recipe(name: str, device: str = "cpu") -> str:
    """How the shipped CNN `name` was trained, read from its weights file's meta."""
    meta = cached_weights(SNAPSHOTS[name], device).meta
    if "train_eps" not in meta:
        return f"{name} CNN: clean training, {meta.get('epochs', '?')} epochs"
    attack = (f"PGD-{meta.get('attack_steps', '?')}" if meta.get("attack") == "pgd"
              else TRAIN_ATTACKS.get(meta.get("attack"), meta.get("attack")))
    return f"{name} CNN: trained on {attack} examples at ε = {meta['train_eps']:g}"


def file_version(name: str) -> tuple[str, int]:
    """(path, modification time) of a snapshot: part of every cached result's key, so a rebuilt
    or removed file is read again (and a missing one reported) instead of served stale."""
    path = SNAPSHOTS[name]
    return str(path), path.stat().st_mtime_ns if path.is_file() else -1


@st.cache_data(max_entries=8, show_spinner=False)
def _clean_accuracy(model: str, device: str, version=None) -> float:
    d = heldout_digits()
    return float(adv.robust_accuracy(model_of(model, device), d.images, d.labels, [0.0]).accuracy[0])


def clean_accuracy(s: Mapping[str, Any], model: str | None = None, device: str = "cpu") -> float:
    model = model or s["adv_model"]
    return _clean_accuracy(model, device, file_version(model))


def spec_of(s: Mapping[str, Any], seed: int = 0) -> adv.AttackSpec:
    if s["adv_attack"] == "fgsm":
        return adv.AttackSpec("fgsm")
    l2 = s["adv_attack"] == "pgd_l2"
    return adv.AttackSpec("pgd", steps=int(s["adv_steps"]), norm="l2" if l2 else "linf",
                          alpha_ratio=0.25, seed=int(seed))


def radius_of(s: Mapping[str, Any]) -> float:
    """The ball's radius: eps (L-inf), or 8 eps (L2)."""
    return float(s["adv_eps"]) * (L2_SCALE if s["adv_attack"] == "pgd_l2" else 1.0)


def target_of(s: Mapping[str, Any]) -> int | None:
    return None if int(s["adv_target"]) < 0 else int(s["adv_target"])


@st.cache_data(max_entries=128, show_spinner=False)
def _attack_one(model: str, digit: int, radius: float, spec: adv.AttackSpec, target, device,
                version=None):
    d = heldout_digits()
    return adv.attack_one(model_of(model, device), d.images[digit], int(d.labels[digit]),
                          radius, spec, target)


def attack_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> adv.AttackResult:
    """The selected held-out digit under the selected attack."""
    return _attack_one(s["adv_model"], int(s["adv_digit"]), radius_of(s), spec_of(s, seed),
                       target_of(s), device, file_version(s["adv_model"]))


@st.cache_data(max_entries=128, show_spinner=False)
def _heldout_accuracy(model: str, radius: float, spec: adv.AttackSpec, device: str,
                      version=None) -> float:
    d = heldout_digits()
    return float(adv.robust_accuracy(model_of(model, device), d.images, d.labels, [radius],
                                     spec).accuracy[0])


def heldout_accuracy(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> float:
    """Accuracy of the selected CNN on the 359 held-out digits under the selected attack."""
    return _heldout_accuracy(s["adv_model"], radius_of(s), spec_of(s, seed), device,
                             file_version(s["adv_model"]))


@st.cache_data(max_entries=64, show_spinner=False)
def _targeted_rate(model: str, radius: float, spec: adv.AttackSpec, target: int, device: str,
                   version=None):
    d = heldout_digits()
    return float(adv.targeted_success(model_of(model, device), d.images, d.labels, target,
                                      [radius], spec).success_rate[0])


def targeted_rate(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> float:
    """Share of the held-out digits of other classes that the targeted attack sends to the
    target class."""
    return _targeted_rate(s["adv_model"], radius_of(s), spec_of(s, seed), target_of(s), device,
                          file_version(s["adv_model"]))


@st.cache_data(max_entries=16 * 2 * len(MODELS) * len(CURVE_EPS), show_spinner=False)
def _curve_point(model: str, kind: str, steps: int, seed: int, device: str, eps: float,
                 versions=None) -> float:
    """Accuracy of one shipped CNN under one attack at one ε on the held-out digits (each
    attack seeds its own random start from the spec, so points equal one call over every ε)."""
    d = heldout_digits()
    return float(adv.robust_accuracy(model_of(model, device), d.images, d.labels, [eps],
                                     _curve_spec(kind, steps, seed)).accuracy[0])


def _curve_spec(kind: str, steps: int, seed: int) -> adv.AttackSpec:
    return adv.AttackSpec("fgsm") if kind == "FGSM" else adv.AttackSpec("pgd", steps=steps,
                                                                         seed=seed)


def curves_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu", progress=None) -> dict:
    """{(model, "FGSM" | "PGD"): RobustnessCurve} over CURVE_EPS, both shipped CNNs, one cached
    point at a time; `progress(done, total)` after each (network, attack, ε)."""
    steps, versions = int(s["adv_steps"]), tuple(map(file_version, MODELS))
    n = len(heldout_digits().labels)
    total, done, out = 2 * len(MODELS) * len(CURVE_EPS), 0, {}
    for model in MODELS:
        for kind in ("FGSM", "PGD"):
            acc = []
            for eps in CURVE_EPS:
                acc.append(_curve_point(model, kind, steps, int(seed), device, float(eps),
                                        versions))
                done += 1
                if progress is not None:
                    progress(done, total)
            out[(model, kind)] = adv.RobustnessCurve(
                np.asarray(CURVE_EPS, np.float64), np.asarray(acc, np.float64),
                adv.attack_label(_curve_spec(kind, steps, int(seed))), n)
    return out


@lesson_measure
def curve_at(s, model: str, attack: str, eps: float) -> float:
    c = curves_of(s)[(model, attack)]
    return float(c.accuracy[int(np.argmin(np.abs(c.eps - eps)))])


@lesson_measure
def fgsm_minus_pgd(s) -> float:
    """min over both CNNs and every eps of acc(FGSM) - acc(PGD): >= 0 when FGSM is never the
    stronger attack."""
    c = curves_of(s)
    return float(min((c[(m, "FGSM")].accuracy - c[(m, "PGD")].accuracy).min() for m in MODELS))


@st.cache_data(max_entries=1, show_spinner=False)
def gallery_digits() -> tuple[np.ndarray, np.ndarray]:
    """The first GALLERY held-out digits and their labels (reading the split takes ~20 ms)."""
    d = heldout_digits()
    return d.images[:GALLERY], d.labels[:GALLERY]


def linear_of(s: Mapping[str, Any]) -> adv.LinearEffect:
    return _linear(float(s["adv_lin_eps"]))


@st.cache_data(max_entries=32, show_spinner=False)
def _linear(eps: float) -> adv.LinearEffect:
    return adv.linear_model_effect(LINEAR_DIMS, eps, seed=0)


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# ---- measurements the claims use (also shown on the page)
@lesson_measure
def fooled(s) -> float:
    """1 when the attack succeeds on the selected digit (wrong class / the target), else 0."""
    return float(attack_of(s).success)


@lesson_measure
def kept(s) -> float:
    r = attack_of(s)
    return float(r.pred_after == r.label)
