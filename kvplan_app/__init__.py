"""kvplan's Streamlit dashboard: the router, the page scripts (``views/``) and the link state.

The arithmetic lives in :mod:`planner`; nothing here computes a figure.
"""
