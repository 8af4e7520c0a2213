"""The one CSV writer for every kvplan export (UI downloads and ``kvplan ... --csv``).

Contract (``docs/csv.md``): UTF-8 without a byte-order mark, one header row,
``\\n`` line ends, a column per field with its unit in the name (``kv_bytes``,
``kv_gib``), numbers written as numbers (floats in shortest round-trip form,
an empty cell for a missing value).

CSV formula injection (OWASP, "CSV Injection"): a spreadsheet treats a cell
that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a
formula. Every *string* cell (and header) that begins with one of them is
prefixed with a single quote, which spreadsheets show as text. Numbers are
never touched: ``-1`` stays the number -1, but the string ``"-1"`` becomes
``'-1``.

>>> import pandas as pd
>>> to_csv_bytes(pd.DataFrame({"model_id": ["=1+1"], "kv_bytes": [-1]}))
b"model_id,kv_bytes\\n'=1+1,-1\\n"
"""

from __future__ import annotations

import pandas as pd

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)."""
NEUTRALISER = "'"
"""Prefix that makes a spreadsheet show the cell as text."""
CSV_MIME = "text/csv"
"""MIME type of the exports."""


def neutralise(value: object) -> object:
    """``value`` with a leading quote when it is a string a spreadsheet would run as a formula.

    >>> neutralise("=1+1"), neutralise("-1"), neutralise(-1), neutralise("h200")
    ("'=1+1", "'-1", -1, 'h200')
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return NEUTRALISER + value
    return value


def safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with string cells and headers neutralised (numeric columns untouched).

    Categorical columns (the frontier grid's accelerator labels) are text too:
    their categories are neutralised, the codes kept.
    """
    out = df.copy()
    for col in out.columns:
        dtype = out[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cats = dtype.categories
            if cats.dtype == object or pd.api.types.is_string_dtype(cats.dtype):
                renamed = [neutralise(c) for c in cats]
                if len(set(renamed)) == len(renamed):
                    out[col] = out[col].cat.rename_categories(renamed)
                else:  # "=x" next to "'=x": two categories would merge, so write the cells as text
                    out[col] = out[col].astype(object).map(neutralise)
        elif dtype == object or pd.api.types.is_string_dtype(dtype):
            out[col] = out[col].map(neutralise)
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out


def to_csv_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as CSV bytes: UTF-8, one header row, no index, ``\\n`` line ends, formula cells neutralised."""
    return safe_frame(df).to_csv(index=False, lineterminator="\n").encode("utf-8")
