"""Streamlit-side helpers shared by the pages (state, links). Not part of ``planner``."""
