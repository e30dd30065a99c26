"""The home page: a gallery of the topics, grouped by section, each a card with a
thumbnail, one sentence and a link."""
from __future__ import annotations

import streamlit as st

from ui import lesson_gallery
from ui import lesson_player
from ui.topics import SECTIONS, TOPICS, Topic

CARDS_PER_ROW = 4


def _card(topic: Topic, page) -> None:
    with st.container(border=True):
        if topic.thumbnail.exists():
            st.image(str(topic.thumbnail), width="stretch")
        st.markdown(f"**{topic.title}**")
        st.caption(topic.sentence)
        st.page_link(page, label="Open", icon=":material/arrow_forward:",
                     help="The code: " + ", ".join(topic.code_files))


def gallery(pages: dict[str, object]) -> None:
    """pages: slug -> st.Page, as registered with st.navigation."""
    lesson_player.enter(None)          # a lesson link to the home page goes to its slide
    st.title("Deep-learning playground")
    st.markdown("Every figure here is computed live by real PyTorch code: move a slider and "
                "the model, the optimizer or the sampler runs again. Pick a topic.")
    for section in SECTIONS:
        st.subheader(section)
        topics = [t for t in TOPICS if t.section == section]
        for row in range(0, len(topics), CARDS_PER_ROW):
            cols = st.columns(CARDS_PER_ROW)
            for col, topic in zip(cols, topics[row:row + CARDS_PER_ROW]):
                with col:
                    _card(topic, pages[topic.slug])
    lesson_gallery.gallery_section()
