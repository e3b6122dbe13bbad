"""Crashes at import."""

raise RuntimeError("import_crash: boom at import")
