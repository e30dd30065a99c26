"""engine/adversarial/__init__.py and engine/adversarial/training.py: attacks against closed forms and
hand-written steps, the constraints PGD must keep, the trainer protocol, and the shipped
snapshots' measured robustness."""
import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from engine import adversarial as adv
from engine import weights
from engine.adversarial import (AttackSpec, attack_one, fgsm, linear_model_effect, pgd, project,
                                robust_accuracy, targeted_success, worst_linear_perturbation)
from engine.adversarial.training import (MODEL_CONFIG, SNAPSHOTS, AdvTrainConfig,
                                         AdversarialTrainer, load_snapshot, model_from_weights,
                                         heldout_digits, training_digits)
from engine.training import Trainer

CLAIM_EPS = 0.125


def _linear(seed=0, d=64, k=10, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(d, k))
    with torch.no_grad():
        model[1].weight.copy_(torch.randn(k, d, generator=g))
        model[1].bias.copy_(torch.randn(k, generator=g))
    return model.to(device)


def _images(n=16, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    return x.to(device), y.to(device)


@pytest.fixture(scope="module")
def standard():
    return load_snapshot("standard")[0]


@pytest.fixture(scope="module")
def robust():
    return load_snapshot("robust")[0]


@pytest.fixture(scope="module")
def test_digits():
    return heldout_digits()


# ---------------------------------------------------------------- FGSM


def test_fgsm_is_the_closed_form_sign_gradient_step_of_a_linear_softmax(device):
    """For logits = W x + b, grad_x CE = W^T (softmax(Wx + b) - onehot(y))."""
    model = _linear(device=device)
    x, y = _images(device=device)
    W, b = model[1].weight, model[1].bias
    flat = x.flatten(1)
    with torch.no_grad():
        grad = (torch.softmax(flat @ W.T + b, 1) - F.one_hot(y, 10).float()) @ W
    expected = (flat + 0.1 * grad.sign()).clamp(0, 1).view_as(x)
    assert torch.allclose(fgsm(model, x, y, 0.1), expected, atol=1e-6)
    target = (y + 3) % 10
    with torch.no_grad():
        grad_t = (torch.softmax(flat @ W.T + b, 1) - F.one_hot(target, 10).float()) @ W
    expected_t = (flat - 0.1 * grad_t.sign()).clamp(0, 1).view_as(x)
    assert torch.allclose(fgsm(model, x, target, 0.1, targeted=True), expected_t, atol=1e-6)


def test_fgsm_equals_a_hand_written_autograd_step_on_the_cnn(standard, test_digits):
    x = torch.as_tensor(test_digits.images[:40, None])
    y = torch.as_tensor(test_digits.labels[:40])
    out = fgsm(standard, x, y, 0.07)
    assert all(p.grad is None for p in standard.parameters())   # no parameter gradients kept
    xr = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(F.cross_entropy(standard(xr), y), xr)  # mean: same signs
    assert torch.equal(out, (x + 0.07 * grad.sign()).clamp(0, 1))


def test_fgsm_eps_zero_is_the_identity_and_keeps_pixels_in_range(standard, test_digits):
    x = torch.as_tensor(test_digits.images[:20])
    y = torch.as_tensor(test_digits.labels[:20])
    assert torch.equal(fgsm(standard, x, y, 0.0), x[:, None])
    big = fgsm(standard, x, y, 5.0)
    assert big.min() >= 0 and big.max() <= 1
    assert set(np.unique(big.numpy())) <= {0.0, 1.0}    # eps = 5: every pixel pushed to a bound


def test_pgd_one_step_of_size_eps_without_random_start_is_fgsm(standard, test_digits):
    x = torch.as_tensor(test_digits.images[:30, None])
    y = torch.as_tensor(test_digits.labels[:30])
    assert torch.equal(pgd(standard, x, y, 0.1, alpha=0.1, steps=1, random_start=False),
                       fgsm(standard, x, y, 0.1))


# ---------------------------------------------------------------- PGD constraints


@pytest.mark.parametrize("norm", ["linf", "l2"])
@pytest.mark.parametrize("random_start", [True, False])
@pytest.mark.parametrize("targeted", [False, True])
def test_pgd_never_leaves_the_ball_or_the_pixel_range(standard, norm, random_start, targeted):
    x, y = _images(32, seed=1)
    x[:8] = 0.0
    x[8:16] = 1.0                                   # images on the pixel bounds
    for eps in (0.05, 0.3, 1.5):
        out = pgd(standard, x, y, eps, alpha=eps, steps=7, norm=norm,
                  random_start=random_start, seed=2, targeted=targeted)
        delta = (out - x).flatten(1)
        size = delta.abs().max(1).values if norm == "linf" else delta.norm(dim=1)
        assert float(size.max()) <= eps * (1 + 1e-5) + 1e-6
        assert out.min() >= 0 and out.max() <= 1


def test_projection_closed_forms():
    x = torch.full((1, 1, 2, 2), 0.5)
    far = x + torch.tensor([0.3, -0.4, 0.0, 0.0]).view(1, 1, 2, 2)        # |delta|_2 = 0.5
    l2 = project(far, x, 0.25, "l2")
    assert torch.allclose(l2 - x, torch.tensor([0.15, -0.2, 0.0, 0.0]).view(1, 1, 2, 2))
    linf = project(far, x, 0.1, "linf")
    assert torch.allclose(linf - x, torch.tensor([0.1, -0.1, 0.0, 0.0]).view(1, 1, 2, 2))
    with pytest.raises(ValueError):
        project(far, x, 0.1, "l1")


def test_pgd_is_seeded_and_deterministic(standard):
    x, y = _images(16, seed=3)
    a = pgd(standard, x, y, 0.1, seed=5)
    assert torch.equal(a, pgd(standard, x, y, 0.1, seed=5))
    assert not torch.equal(a, pgd(standard, x, y, 0.1, seed=6))


def test_pgd_raises_the_loss_more_than_fgsm(standard, test_digits):
    x = torch.as_tensor(test_digits.images[:, None])
    y = torch.as_tensor(test_digits.labels)
    with torch.no_grad():
        lf = F.cross_entropy(standard(fgsm(standard, x, y, 0.1)), y)
        lp = F.cross_entropy(standard(pgd(standard, x, y, 0.1)), y)
        l0 = F.cross_entropy(standard(x), y)
    assert l0 < lf < lp


def test_attack_spec_validation():
    with pytest.raises(ValueError):
        AttackSpec("cw")
    with pytest.raises(ValueError):
        AttackSpec("fgsm", norm="l2")
    with pytest.raises(ValueError):
        AttackSpec("pgd", norm="l1")
    assert set(adv.ATTACKS) == {"fgsm", "pgd"}


def test_attacks_run_on_every_device(device, standard):
    model = load_snapshot("standard", device)[0]
    x, y = _images(8, seed=4, device=device)
    out = pgd(model, x, y, 0.1, steps=3)
    ref = pgd(standard, x.cpu(), y.cpu(), 0.1, steps=3)
    assert out.device.type == torch.device(device).type
    assert (out.cpu() - x.cpu()).abs().max() <= 0.1 + 1e-6
    assert torch.allclose(out.cpu(), ref, atol=1e-4) or device != "cpu"


# ---------------------------------------------------------------- measurements


def test_attack_one_reports_what_it_did(standard, test_digits):
    img, label = test_digits.images[0], int(test_digits.labels[0])
    r = attack_one(standard, img, label, 0.2, AttackSpec("pgd"))
    assert r.linf <= 0.2 + 1e-6 and np.allclose(r.adversarial - r.image, r.perturbation)
    assert r.pred_before == label and np.isclose(r.probs_before.sum(), 1, atol=1e-5)
    assert r.success == (r.pred_after != label)
    t = attack_one(standard, img, label, 0.3, AttackSpec("pgd"), target=8)
    assert t.target == 8 and t.success == (t.pred_after == 8)
    assert math.isclose(t.l2, float(np.linalg.norm(t.perturbation)), rel_tol=1e-5)


def test_robust_accuracy_at_eps_zero_is_clean_accuracy(standard, test_digits):
    c = robust_accuracy(standard, test_digits.images, test_digits.labels, [0.0], AttackSpec())
    with torch.no_grad():
        pred = standard(torch.as_tensor(test_digits.images[:, None])).argmax(1).numpy()
    assert c.accuracy[0] == pytest.approx(float((pred == test_digits.labels).mean()))
    assert c.n == 359 and c.attack == "PGD-10"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fgsm", "pgd"])
def test_robust_accuracy_is_non_increasing_in_eps(standard, robust, test_digits, kind):
    eps = np.linspace(0, 0.3, 9)
    for model in (standard, robust):
        acc = robust_accuracy(model, test_digits.images, test_digits.labels, eps,
                              AttackSpec(kind)).accuracy
        assert np.all(np.diff(acc) <= 2 / 359)       # within two digits of noise
        assert acc[-1] < acc[0] - 0.3


def test_targeted_success_counts_only_other_classes(standard, test_digits):
    sweep = targeted_success(standard, test_digits.images[:60], test_digits.labels[:60], 3,
                             [0.0, 0.3])
    assert sweep.n == int((test_digits.labels[:60] != 3).sum())
    keep = test_digits.labels[:60] != 3
    with torch.no_grad():
        pred = standard(torch.as_tensor(test_digits.images[:60][keep][:, None])).argmax(1)
    assert sweep.success_rate[0] == pytest.approx(float((pred == 3).float().mean()))  # misread
    assert sweep.success_rate[1] > 0.9


# ---------------------------------------------------------------- the linear explanation


def test_worst_linear_perturbation_is_the_best_cube_corner():
    w = torch.randn(8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    eta, change = worst_linear_perturbation(w, 0.1)
    corners = torch.tensor(list(itertools.product([-0.1, 0.1], repeat=8)), dtype=torch.float64)
    assert change == pytest.approx(float((corners @ w).max()))
    assert change == pytest.approx(0.1 * float(w.abs().sum()))
    assert float(eta.abs().max()) == pytest.approx(0.1)


def test_linear_effect_grows_with_dimension():
    dims = [10, 100, 1000, 10000]
    e = linear_model_effect(dims, eps=0.01, seed=0)
    assert np.allclose(e.worst_change, e.expected, rtol=0.25)          # eps d sqrt(2/pi)
    assert e.worst_change[-1] / e.worst_change[0] == pytest.approx(1000, rel=0.25)
    # a random-sign perturbation of the same size only grows like sqrt(d)
    assert np.allclose(e.random_change, 0.01 * np.sqrt(dims) * math.sqrt(2 / math.pi),
                       rtol=0.3)
    assert np.allclose(e.score_std, np.sqrt(np.asarray(dims) / 12), rtol=0.3)
    assert e.worst_change[-1] > e.score_std[-1]     # eps = 0.01 moves the score past its spread


# ---------------------------------------------------------------- the trainer


def test_trainer_follows_the_protocol_and_resumes_exactly():
    cfg = AdvTrainConfig(train_eps=0.15, attack_steps=2, total_steps=40, seed=1)
    small = heldout_digits()
    test = type(small)(small.images[:50], small.labels[:50])
    a = AdversarialTrainer(cfg, test=test, eval_eps=(0.0, 0.1))
    assert isinstance(a, Trainer)
    a.step(7)
    state = a.state_dict()
    a.step(1)                                      # moves the optimizer state after saving
    a.step(4)
    b = AdversarialTrainer(cfg, test=test, eval_eps=(0.0, 0.1))
    b.load_state_dict(state)
    b.step(5)
    assert a.steps == b.steps == 12
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(pa, pb)
    snap = a.snapshot()
    assert snap.step == 12 and snap.curve.eps.tolist() == [0.0, 0.1]
    assert snap.clean_accuracy == snap.curve.accuracy[0]
    assert a.history.as_arrays("loss")[0].tolist() == [7, 8, 12]


def test_playing_snapshots_carry_a_background_curve_labelled_with_its_step():
    from engine.training import tell_playing
    cfg = AdvTrainConfig(train_eps=0.15, attack_steps=2, total_steps=40, seed=1)
    small = heldout_digits()
    test = type(small)(small.images[:50], small.labels[:50])
    live = AdversarialTrainer(cfg, test=test, eval_eps=(0.0, 0.1), curve_every_s=0.0)
    ref = AdversarialTrainer(cfg, test=test, eval_eps=(0.0, 0.1))
    tell_playing(live, True)
    first = live.snapshot()                          # nothing measured yet: measured now
    assert first.step == first.curve_step == 0
    live.step(3)
    ref.step(3)
    moving = live.snapshot()                         # playing: no wait for the curve
    assert moving.step == 3 and moving.curve_step in (0, 3)
    live.wait_for_curve(60)
    live.step(2)
    ref_at_3 = ref.snapshot()
    later = live.snapshot()
    assert later.step == 5 and later.curve_step == 3  # the background one, at its own step
    np.testing.assert_allclose(later.curve.accuracy, ref_at_3.curve.accuracy)
    assert later.clean_accuracy == ref_at_3.clean_accuracy
    live.wait_for_curve(60)
    ref.step(2)
    tell_playing(live, False)
    still = live.snapshot()                          # paused: its own state, measured now
    assert still.step == still.curve_step == 5
    np.testing.assert_allclose(still.curve.accuracy, ref.snapshot().curve.accuracy)


def test_trainer_cosine_learning_rate():
    t = AdversarialTrainer(AdvTrainConfig(lr=0.01, total_steps=100), test=heldout_digits())
    assert t.learning_rate(0) == pytest.approx(0.01)
    assert t.learning_rate(50) == pytest.approx(0.005)
    assert t.learning_rate(100) == pytest.approx(0.0) == t.learning_rate(200)


def test_trainer_divergence_is_a_result():
    t = AdversarialTrainer(AdvTrainConfig(attack_steps=2), test=heldout_digits())
    t.step(2)
    with torch.no_grad():
        t.model[2].weight[0, 0] = float("inf")     # a blown-up weight: the next loss is NaN
    t.step(5)
    assert t.diverged_at == 3 and not math.isfinite(t.history.last("loss"))
    assert t.step(3) == {} and t.steps == 3
    assert t.snapshot().diverged_at == 3


def test_config_validation():
    with pytest.raises(ValueError):
        AdvTrainConfig(attack="cw")
    with pytest.raises(ValueError):
        AdvTrainConfig(train_eps=-0.1)
    assert not AdvTrainConfig(train_eps=0.0).adversarial
    assert not AdvTrainConfig(attack="none").adversarial


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_adversarial_training_buys_robustness(seed):
    """Same network, data, seed and 460 steps (20 epochs): PGD examples vs clean ones."""
    test = heldout_digits()
    out = {}
    for attack in ("pgd", "none"):
        t = AdversarialTrainer(AdvTrainConfig(attack=attack, attack_steps=3, total_steps=460,
                                              seed=seed), test=test, eval_eps=(0.0, 0.125))
        t.step(460)
        out[attack] = t.snapshot().curve.accuracy
    assert out["pgd"][0] > 0.7 and out["none"][0] > 0.9
    assert out["pgd"][1] > out["none"][1] + 0.2


# ---------------------------------------------------------------- the shipped snapshots


def test_snapshots_are_small_and_in_the_shared_format():
    for name, path in SNAPSHOTS.items():
        assert path.stat().st_size < 1_000_000
        w = weights.load(path, expect_config=MODEL_CONFIG)
        assert w.version == weights.FORMAT_VERSION
        assert model_from_weights(w)[2].out_features == 10
    assert load_snapshot("robust")[1]["train_eps"] == 0.15
    with pytest.raises(KeyError):
        load_snapshot("huge")


def test_snapshot_of_another_architecture_is_stale(tmp_path):
    w = weights.load(SNAPSHOTS["standard"])
    p = weights.save(tmp_path / "x.pt", {**MODEL_CONFIG, "classes": 11}, w.state, {})
    with pytest.raises(weights.StaleWeightsError):
        model_from_weights(weights.load(p))


def test_snapshots_were_trained_on_the_train_split_only():
    tr, te = training_digits(), heldout_digits()
    assert len(tr.labels) + len(te.labels) == 1797
    flat = {im.tobytes() for im in tr.images}
    assert sum(im.tobytes() in flat for im in te.images) < 5      # sklearn has a few duplicates


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_shipped_snapshots_meet_the_page_claims(standard, robust, test_digits, seed):
    """The numbers the page states, for two PGD random starts."""
    spec = AttackSpec("pgd", seed=seed)
    std = robust_accuracy(standard, test_digits.images, test_digits.labels, [0, CLAIM_EPS], spec)
    rob = robust_accuracy(robust, test_digits.images, test_digits.labels, [0, CLAIM_EPS], spec)
    assert std.accuracy[0] > 0.97 and rob.accuracy[0] > 0.97
    assert std.accuracy[1] < 0.20
    assert rob.accuracy[1] >= 0.70
    strong = robust_accuracy(robust, test_digits.images, test_digits.labels, [CLAIM_EPS],
                             AttackSpec("pgd", steps=40, seed=seed))
    assert strong.accuracy[0] >= 0.68                # not an artefact of a weak attack
