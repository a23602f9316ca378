"""codeqa-lsp: ask questions about your codebase, get answers cited to the exact lines."""

__version__ = "0.1.0"
