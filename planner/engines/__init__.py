"""What serving engines (vLLM, SGLang) do with a layout: pages, blocks, capacity in their terms, their logs.

:mod:`~planner.engines.vllm_paging` reproduces vLLM V1's cache specs and KV-cache groups,
:mod:`~planner.engines.capacity` the theory-vs-engine figures (blocks, maximum concurrency),
:mod:`~planner.engines.logs` reads the engines' start-up lines, and :mod:`~planner.engines.reconcile` sets a log
beside kvplan's prediction with the cause of each difference.
"""
