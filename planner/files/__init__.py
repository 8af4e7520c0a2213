"""Files kvplan reads and writes: plan files, the one CSV writer.

:mod:`planner.reads` holds the bounded reads of user-named files; :mod:`~planner.files.planfile` (versioned plan
JSON), :mod:`~planner.files.export` (CSV contract of every export).
"""
