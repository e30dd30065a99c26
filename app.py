"""Entry point: `streamlit run app.py`. Page config, navigation, the shared sidebar."""
import streamlit as st

from engine.device import configure_threads
from viz.gallery import gallery
from viz.sidebar import shared_sidebar
from viz.topics import SECTIONS, TOPICS

configure_threads()  # small models, many sessions: one torch thread each (DLPLAY_TORCH_THREADS)
st.set_page_config(page_title="Deep-learning playground", page_icon=":material/school:",
                   layout="wide")

PAGES = {t.slug: st.Page(t.page_file, title=t.title, icon=t.icon, url_path=t.slug)
         for t in TOPICS}
HOME = st.Page(lambda: gallery(PAGES), title="Gallery", icon=":material/home:",
               url_path="home", default=True)
st.session_state["_home_page"] = HOME

navigation = st.navigation({"Start": [HOME],
                            **{s: [PAGES[t.slug] for t in TOPICS if t.section == s]
                               for s in SECTIONS}})
shared_sidebar()
navigation.run()
