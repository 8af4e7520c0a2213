"""kvplan dashboard from a checkout: ``streamlit run app.py`` (installed: ``kvplan serve``)."""

from kvplan_app.router import main

main()
