"""Streamlit helpers shared by the dashboard's pages (state, data loading, guarded engine calls, controls).

All computation goes through the ``cocoviz`` package and all figures come
from :mod:`cocoviz.plots`; this package only reads widgets, caches, and
turns the engine's ``ValueError``s into messages on the page.
"""
