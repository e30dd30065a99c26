"""Entry point: `streamlit run app.py`.

Streamlit serves playground.py (page config, navigation, the shared sidebar) as usual, plus
one route of ours: GET /_dlplay/frame/<id> (the page's token in a header), from which a playing live page's browser
fetches its frames instead of rerunning the page (live/push.py, live/route.py).
A deep link that names no page is sent to its first segment (live/deep_paths.py).
`streamlit run` finds `app` below (an st.App) and serves it with uvicorn."""
import streamlit as st
from starlette.middleware import Middleware

from live.deep_paths import DeepPathRedirect
from live.route import routes

app = st.App("playground.py", routes=routes(), middleware=[Middleware(DeepPathRedirect)])
