"""The Streamlit script (app.py serves it): page config, navigation, the shared sidebar."""
import streamlit as st

from engine.device import configure_threads
from live.busy import run_page
from ui.gallery import gallery
from ui.figure_index import figure_index
from ui.sidebar import classroom_requested, shared_sidebar
from ui import server_gc
from ui import url_check
from ui.topics import ROOT, SECTIONS, TOPICS

ICON = ROOT / "assets" / "favicon.png"

configure_threads()  # small models, many sessions: one torch thread each (DLPLAY_TORCH_THREADS)
# The icon is a local file: a material-icon favicon is fetched from a font CDN, which fails in a
# lecture hall without internet. Classroom mode starts with the sidebar collapsed: the projector
# needs the width for the figure.
st.set_page_config(page_title="Deep-learning playground", page_icon=str(ICON), layout="wide",
                   initial_sidebar_state="collapsed" if classroom_requested() else "auto")

PAGES = {t.slug: st.Page(t.page_file, title=t.title, icon=t.icon, url_path=t.slug)
         for t in TOPICS}
HOME = st.Page(lambda: gallery(PAGES), title="Gallery", icon=":material/home:",
               url_path="home", default=True)
st.session_state["_home_page"] = HOME
FIGURES = st.Page(figure_index, title="Figure index", icon=":material/menu_book:",
                  url_path="figures")

navigation = st.navigation({"Start": [HOME, FIGURES],
                            **{s: [PAGES[t.slug] for t in TOPICS if t.section == s]
                               for s in SECTIONS}})
shared_sidebar()
notice = st.empty()     # the page's one notice about a URL it could not use (ui/url_check.py)
try:
    run_page(navigation.run)    # a trainer busy past the page's wait: a status line (live/busy.py)
finally:
    url_check.drop_unknown()        # only after a topic page checked its whole table
    url_check.show_notice(notice)
server_gc.after_run()   # freeze what the imports made: reruns stop walking it (ui/server_gc.py)
