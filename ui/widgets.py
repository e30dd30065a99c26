"""Widget groups every page shares: presets and steps (their data), applying settings, export.

A *setting* is a dict {widget key: value}. Applying it writes st.session_state[key] = value
inside a widget callback (callbacks run before the script, so the widgets are then drawn with
the new values, and bound widgets update the URL). Pages declare presets and steps as data:

    PRESETS = {
        "κ = 1: one step": Preset({"kappa": 1.0, "lr": 1.0}, "GD lands on w* in one step."),
        ...
    }
    preset_picker(PRESETS, key="gd_preset")
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from ui import session

CHOOSE = "Choose a preset…"


@dataclass(frozen=True)
class Preset:
    settings: dict[str, Any]   # widget key -> value
    description: str = ""      # what to look at once it is applied
    view: str | None = None    # the view (tab) it opens: a View.key of the page skeleton
    claims: tuple = ()         # ui.claims.Claim: what `description` states, as measurements
    acts_on: tuple = ()        # keys the text's own action changes ("press Fit q"): the card
                               # stays, and its claims read the preset's values for them
    shows: tuple = ()          # widget keys of the figures, metrics and buttons its words
                               # point to: on the projector's first screen (the e2e walk)

    @property
    def held(self) -> dict[str, Any]:
        """The settings that must still hold for the card to describe the screen."""
        return {k: v for k, v in self.settings.items() if k not in self.acts_on}


@dataclass(frozen=True)
class Step:
    title: str
    body: str                  # markdown: one paragraph of explanation
    settings: dict[str, Any] = field(default_factory=dict)
    view: str | None = None    # the view (tab) "Show me" opens
    claims: tuple = ()         # ui.claims.Claim: what `body` states, as measurements
    acts_on: tuple = ()        # keys the text's own action changes (see Preset.acts_on)
    shows: tuple = ()          # widget keys its words point to (see Preset.shows)

    @property
    def held(self) -> dict[str, Any]:
        return {k: v for k, v in self.settings.items() if k not in self.acts_on}


def apply_settings(settings: Mapping[str, Any]) -> None:
    """Write each widget value into session state (use from a callback)."""
    for key, value in settings.items():
        st.session_state[key] = value


def settings_match(settings: Mapping[str, Any]) -> bool:
    """True when every widget currently holds the value the setting gives it."""
    return all(_same(st.session_state.get(k), v) for k, v in settings.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return bool(np.isclose(a, b, rtol=1e-9, atol=0.0))
    return a == b


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays and tuples so json.dumps accepts them."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def config_json(config: Mapping[str, Any], page: str) -> str:
    """The configuration as pretty JSON, with the page, seed and device added."""
    full = {"page": page, "seed": session.seed(), "device": session.device(), **config}
    return json.dumps(to_jsonable(full), indent=2, sort_keys=False)


def export_buttons(data: pd.DataFrame, config: Mapping[str, Any], basename: str,
                   container=None) -> None:
    """Two download buttons: the plotted data as CSV and the configuration as JSON. The files
    are built when a button is clicked (callable `data`), not on every rerun that draws the
    buttons: formatting a few thousand rows cost ~10-100 ms of each slider move."""
    box = container or st
    cols = box.columns(2)
    cols[0].download_button("Download data (CSV)", lambda: data.to_csv(index=False).encode(),
                            file_name=f"{basename}.csv", mime="text/csv",
                            icon=":material/download:", key=f"{basename}__csv",
                            on_click="ignore")
    cols[1].download_button("Download settings (JSON)",
                            lambda: config_json(config, basename).encode(),
                            file_name=f"{basename}-config.json", mime="application/json",
                            icon=":material/settings:", key=f"{basename}__json",
                            on_click="ignore")
