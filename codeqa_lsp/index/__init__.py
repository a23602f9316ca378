"""Persistent per-workspace index: SQLite (metadata + FTS5/BM25) and hnswlib (vectors)."""
