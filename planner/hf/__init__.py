"""Reading checkpoints: a Hugging Face ``config.json`` (every public dialect) into a :mod:`planner.kv` layout.

:mod:`~planner.hf.config` builds the layout and its import report; :mod:`~planner.hf.layers` reads the layer mix,
:mod:`~planner.hf.deepseek` the DeepSeek latents, indexers and compressed entries, :mod:`~planner.hf.state` the
Mamba / linear-attention state, :mod:`~planner.hf.quant` the KV dtype a checkpoint declares, and
:mod:`~planner.hf.report` the line-per-field report of what was read, derived, defaulted or ignored.
"""
