"""KV bytes: number formats, one frozen spec per layer kind, a model's layout and its per-sequence estimate.

The ground of every figure kvplan prints: :mod:`~planner.kv.formats` (element width and block scales),
:mod:`~planner.kv.group` (the base spec), the kinds in :mod:`~planner.kv.attention`, :mod:`~planner.kv.deepseek`
and :mod:`~planner.kv.state` (listed in :mod:`~planner.kv.kinds`), :mod:`~planner.kv.models` (a model = its layer
groups, a reported coefficient, weights) and :mod:`~planner.kv.estimate` (what one sequence costs, per group).
Nothing here knows an engine, a page or a file format.
"""
