"""`python -m codeqa_lsp` starts the language server (what editors launch without a PATH entry)."""

from codeqa_lsp.server.__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())
