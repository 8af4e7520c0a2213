"""Files kvplan reads and writes: bounded reads of user-named files, plan files, the one CSV writer.

:mod:`~planner.files.reads` (regular files only, size-capped), :mod:`~planner.files.planfile` (versioned plan
JSON), :mod:`~planner.files.export` (CSV contract of every export).
"""
