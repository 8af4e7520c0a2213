"""The dashboard's charts: Plotly figures built by pure functions (inputs in, ``go.Figure`` out).

:mod:`~kvplan_app.charts.style` (the plan's marker and label, log ticks, legend), :mod:`~kvplan_app.charts.figures`
(plan, context and recommend charts), :mod:`~kvplan_app.charts.frontier` (frontier charts),
:mod:`~kvplan_app.charts.traces` (trace charts). No Streamlit here, so each figure is tested as a function.
"""
