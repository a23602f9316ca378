"""`python -m codeqa_lsp.cli ...` runs the `codeqa` CLI (for clients that launch a module,
e.g. an MCP registration that should not depend on the PATH)."""

from codeqa_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
