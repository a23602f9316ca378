"""The shared team index on PostgreSQL + pgvector (issue 17).

`dsn` validates the store URL (no passwords in settings, redaction for logs), `schema`
creates the tables and documents the grants, `snapshot` serves one published commit to
queries, `publish` writes a snapshot incrementally, `gitinfo` finds the repository
identity and the nearest published commit. Nothing here imports retrieval or above: the
client-side merge of shared and local results lives in `codeqa_lsp.index.overlay`.
"""
