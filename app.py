"""cocoviz dashboard: differentially private hierarchical count-of-counts histograms.

Run:  streamlit run app.py

The entry point only sets the page up and hands over to the chosen page
(Explore is the landing page); settings shared between pages live in
``st.session_state`` (see ``pages/common/state.py``).
"""

import streamlit as st

from pages.common.progress import keep_previous_readable

# An emoji icon is drawn by the browser itself; a material icon as favicon is fetched from fonts.gstatic.com on
# every visit (a third-party request, and a failed one offline).
st.set_page_config(page_title="cocoviz — private count-of-counts", page_icon="📊", layout="wide")
keep_previous_readable()  # a recompute leaves the previous result readable under its status box

PAGES = [
    st.Page("pages/explore.py", title="Explore", icon=":material/search:", default=True),
    st.Page("pages/merging.py", title="Weighted vs. plain averaging", icon=":material/balance:"),
    st.Page("pages/methods.py", title="Method selection", icon=":material/alt_route:"),
    st.Page("pages/compare.py", title="Compare two releases", icon=":material/compare:"),
    st.Page("pages/viewer.py", title="Release viewer", icon=":material/folder_open:", url_path="viewer"),
    st.Page("pages/joint.py", title="Size × tenure", icon=":material/table_chart:"),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
]

st.navigation(PAGES).run()
