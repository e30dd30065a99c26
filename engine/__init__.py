"""Pure computation for the playground: torch/numpy only.

Nothing in this package may import streamlit, plotly or altair (tests/engine/test_purity.py
checks it). Pages read widgets, call a function here, get a small frozen dataclass of CPU
numpy arrays back, and hand it to a figure builder in topics/<slug>/figures.py.
"""
