"""The catalog: models with their sources, accelerators as the device reports them, and memory tiers.

:mod:`~planner.catalog.entries` (bundled models and GPUs), :mod:`~planner.catalog.accelerators` (user-defined
accelerators from files, forms and links), :mod:`~planner.catalog.tiers` (host RAM and SSD behind HBM).
Data files live in :mod:`planner.data`.
"""
