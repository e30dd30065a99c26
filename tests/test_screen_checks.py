"""The walk's number check (tests/e2e/screen_checks.py) without a browser: a number the card's
words state is found on the screen at its precision, or, when it names one of the card's
claims, within that claim's tolerance of the measured value."""
from __future__ import annotations

from tests.e2e.screen_checks import claim_windows, missing_numbers

CLAIMS = ["max |out(Px) − P·out(x)| without positions: 1.79e-7 ✓ (≤ 1.00e-5)",
          "regions near the bend, seed 0, after 600 steps: 40.4% ✓ (≥ 38.0%)",
          "mean row entropy (nats): 0.452 ✓ (0.4 to 0.5)",
          "does the digit flip: yes",
          "modes covered at iteration 1,250: *measured after training (≤ 1)*"]


def test_claim_lines_give_value_and_bounds():
    assert claim_windows(CLAIMS) == [(False, 1.79e-7, -float("inf"), 1e-5),
                                     (True, 40.4, 38.0, float("inf")),
                                     (False, 0.452, 0.4, 0.5)]


def test_a_number_on_the_screen_at_its_precision_is_found():
    assert missing_numbers("rows sharpen (0.45 nats) and 47% flip", "0.452 … 46.9%") == []
    assert missing_numbers("rows sharpen (0.45 nats)", "0.462") == ["0.45"]


def test_a_last_digit_another_machine_rounds_otherwise_is_the_claims_number():
    said = "the share passes 41%; entropy 0.46 nats; round-off 1e-7"
    assert missing_numbers(said, "", CLAIMS) == []


def test_a_number_outside_the_claims_tolerance_is_missing():
    # two units of the last digit away, outside the claim's bounds, or another kind of number
    assert missing_numbers("the share reaches 43%", "", CLAIMS) == ["43%"]
    assert missing_numbers("entropy 0.39 nats", "", ["x: 0.395 ✓ (0.4 to 0.5)"]) == ["0.39"]
    assert missing_numbers("entropy 0.45", "", ["x: 45.2% ✓ (40.0% to 50.0%)"]) == ["0.45"]
    assert missing_numbers("after 37%", "", CLAIMS) == ["37%"]
