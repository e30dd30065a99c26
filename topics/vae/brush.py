"""The VAE page's "Brush the codes" tab: the Latent space tab's model, its test digits' encoder
means as an Altair scatter linked to their labels, digits and decoded means (Vega-Lite
selections: the browser answers a brush, not the server)."""
from __future__ import annotations

import streamlit as st

from live.controls import get_trainer, read_trainer
from topics.vae.compute import brush_data_of, dims_of, shipped_file, trainer_config, trainer_factory
from topics.vae.figures import brush_chart, brush_frame
from ui import session
from ui.altair_theme import show_altair
from ui.render import explain

BRUSH_PX = {False: 340, True: 280}    # the latent scatter's side: laptop, projector


def brush_view(panel, s: dict) -> None:
    """Linked views (Altair, ui/altair_theme.py): the latent codes of the Latent space tab's
    model (`s`: the page's settings); brushing selects in the browser, so a brush move costs
    no rerun."""
    seed, device = session.seed(), session.device()
    dims, _ = dims_of(s)
    get_trainer("vae_live", trainer_factory(s, seed, device),      # the handle exists
                trainer_config(s, seed, device))
    data = read_trainer("vae_live", brush_data_of)
    with panel.controls:
        st.caption(f"The model of the *Latent space* tab ({s['vae_model']}, "
                   f"{'shipped' if shipped_file(s) else 'trained here'}, iteration "
                   f"{data.steps:,}): the encoder means μ(x) of its {len(data.labels)} test "
                   "digits.")
        st.markdown("**Drag a rectangle** on the scatter. The bars count the labels inside "
                    "it; below, the brushed digits and their decoded means. Double-click "
                    "to clear.")
    frame = brush_frame(data.means[:, list(dims)], data.labels, data.images, data.decoded)
    with panel.figure:
        # on the projector (larger fonts, 720 px high) the scatter is smaller, so the
        # brushed digits below it stay on the screen
        show_altair(brush_chart(frame, dims, f"Latent means at iteration {data.steps:,}: "
                                             "brush a region",
                                size=BRUSH_PX[session.classroom()]), key="vae_brush")
    with panel.notes:
        explain("The brush is evaluated by the browser (Vega-Lite's selection): the server "
                "is not asked while you drag, so the bars and the digits follow the "
                "rectangle at once. Brush the border between two clusters: the bars show "
                "both labels, and the decoded means show the blend the decoder makes of "
                "them. Brush the middle of one cluster: its decoded means look alike "
                "(blurred versions of the digit), whatever the handwriting above them.")
