"""Figure builders (plotly) and the Streamlit widget groups every page shares.

- viz/topics.py    the eight topics: title, section, one sentence, page file, issue
- viz/theme.py     the one Plotly template (light and classroom variants)
- viz/session.py   what the shared sidebar chose: device, seed, classroom mode
- viz/render.py    show_figure() (applies the template), explain() (collapses in classroom)
- viz/page.py      page_header(), coming_soon(), safe_run() (no traceback for users)
- viz/widgets.py   preset_picker(), guided_steps(), export_buttons()
- viz/live.py      live_training(): Play/Pause, Step, Reset, steps-per-frame on a fragment
- viz/sidebar.py   the shared sidebar (device, seed, classroom)
"""
