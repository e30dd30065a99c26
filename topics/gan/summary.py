"""The numbers under the GAN's live picture, as ONE markdown element per frame.

A playing frame re-renders every element its fragment emits in the browser (Streamlit's React
tree: each st.metric, st.caption and st.columns cell is a styled component), so the four
coverage metrics, the loss caption and the pretrained note were ~12 elements per frame. Here
they are one HTML block: the pretrained note, a row of badges (label over a large value, the
help text as the badge's tooltip) and the losses line. Pure: plain values in, a string out;
`badges_of` parses it back (what the page tests read)."""
from __future__ import annotations

import html
import math
import re
from typing import NamedTuple, Sequence

BADGE = "Modes covered (mean of last {n} checks)"
_MUTED = "font-size:0.875em;opacity:0.65;margin:0"
_ROW = ("display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:0.25rem 1.25rem;"
        "margin:0.25rem 0 0.4rem 0")
_VALUE = "font-size:1.9em;line-height:1.25"
_BADGE_RE = re.compile(r'<div class="gan-badge" title="[^"]*"><div[^>]*>(.*?)</div>'
                       r'<div[^>]*>(.*?)</div></div>')


class Badge(NamedTuple):
    label: str
    value: str
    help: str


def coverage_badges(cov, smoothed: float, smooth_checks: int, eval_every: int
                    ) -> list[Badge]:
    """The coverage badges of one frame. `cov`: the latest engine coverage (None when the
    target is not a mixture of modes); `smoothed`: the mean of the last `smooth_checks`
    checks' covered modes."""
    if cov is None:
        return [Badge("Modes covered", "n/a", "This target is not a mixture of modes.")]
    kl = ("–" if math.isnan(cov.reverse_kl) or cov.high_quality_fraction < 0.05
          else f"{cov.reverse_kl:.2f}")
    return [
        Badge(BADGE.format(n=smooth_checks), f"{smoothed:.1f} / {cov.n_modes}",
              "A mode is covered if >= 1% of 2,000 samples lie within 3σ of it; checked "
              f"every {eval_every} iterations, averaged over the last {smooth_checks} checks "
              "(one check can jump by several modes)."),
        Badge("Modes covered now", f"{cov.modes_covered} / {cov.n_modes}",
              "At the latest check only."),
        Badge("High-quality samples", f"{cov.high_quality_fraction:.0%}",
              "Share of all samples within 3σ of some mode."),
        Badge("KL(near-mode samples ‖ uniform)", kl,
              "Only the high-quality samples: how unevenly they share the modes, 0 = evenly, "
              f"log k = {math.log(cov.n_modes):.2f} = all on one mode. '–' while fewer than "
              "5% of the samples are near any mode: it then says nothing about coverage.")]


def losses_line(loss_d: float, loss_g: float) -> str:
    return "L_D / L_G (mean over the last chunk): " + (
        "–" if math.isnan(loss_d) and math.isnan(loss_g) else f"{loss_d:.3f} / {loss_g:.3f}")


def pretrained_note(offline: int | None, steps: int) -> str | None:
    """What the picture is when the trainer started from the shipped snapshot (markdown-free
    HTML), None otherwise."""
    if offline is None:
        return None
    if steps == offline:
        return (f"<b>Pretrained snapshot</b>: these settings trained offline for {offline:,} "
                "iterations, shown so the first picture is a trained GAN. <b>Play</b> continues "
                "training it live; <b>Reset</b> starts from scratch.")
    return (f"Continued from a <b>pretrained snapshot</b> ({offline:,} iterations trained "
            "offline). <b>Reset</b> starts from scratch.")


def summary_html(badges: Sequence[Badge], losses: str, note: str | None = None) -> str:
    """One HTML block (no blank line inside, so markdown keeps it whole): the note, the
    badges in a wrapping row, the losses line."""
    e = html.escape
    row = "".join(f'<div class="gan-badge" title="{e(b.help)}"><div style="{_MUTED}">'
                  f'{e(b.label)}</div><div style="{_VALUE}">{e(b.value)}</div></div>'
                  for b in badges)
    head = f'<p style="{_MUTED}">{note}</p>' if note else ""
    return (f'<div class="gan-summary">{head}<div style="{_ROW}">{row}</div>'
            f'<p style="{_MUTED}">{e(losses)}</p></div>')


def badges_of(block: str) -> dict[str, str]:
    """{label: value} of the badges in a summary_html block."""
    return {html.unescape(k): html.unescape(v) for k, v in _BADGE_RE.findall(block)}


def manifold_badges(m) -> list[Badge]:
    """The manifold tab's badges for an engine.gan.manifold.Manifold: the largest share of
    the latent grid in one mode's cell, the modes whose cell the grid reaches, the share that
    lands on a mode (within 3σ), and the share where the map is turned over."""
    from engine.gan.manifold import largest_share, modes_reached
    fold = Badge("Folded share of the grid", _pct(m.fold),
                 "Prior mass where the Jacobian of G on the latent plane has the minority "
                 "sign: the map turns the plane over there (a fold).")
    if not len(m.shares):
        return [Badge("Grid sent to modes", "n/a", "This target is not a mixture of modes."),
                fold]
    k = len(m.shares)
    return [
        Badge("Largest share of the grid in one mode", _pct(largest_share(m)),
              "Share of the latent grid's prior mass that G sends into the cell of its most "
              f"popular mode (the points nearer that mode than any other); 1/{k} = {1 / k:.0%} "
              "for an even spread, near 100% when the plane is squeezed into one mode."),
        Badge("Modes the grid reaches", f"{modes_reached(m)} / {k}",
              "Modes whose cell receives at least 1% of the grid's prior mass."),
        Badge("Grid landing on a mode", _pct(m.on_mode),
              "Prior mass of the latent grid whose image lies within 3σ of its mode."),
        fold]


def _pct(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.0%}"


def shares_line(shares) -> str:
    """'Share of the grid per mode: 0: 12% · 1: 13% · …' (plain text)."""
    if not len(shares):
        return "This target has no modes to share the grid between."
    return "Share of the grid per mode: " + " · ".join(
        f"{j}: {s:.0%}" for j, s in enumerate(shares))
