"""String catalogues of the dashboard, one module per language (English is the source text)."""
