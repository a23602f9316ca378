"""Embedders: `local` (MiniLM, offline), `openai` (on request only), `hash` (always there)."""

from __future__ import annotations

import logging

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.base import CountingEmbedder, Embedder, EmbedderError, l2_normalize
from codeqa_lsp.index.embedders.hashing import HashEmbedder

log = logging.getLogger(__name__)

__all__ = ["CountingEmbedder", "Embedder", "EmbedderError", "HashEmbedder", "create_embedder", "l2_normalize"]


def create_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for. `auto` is `local` when installed, else `hash`;
    never `openai` (a key in the environment is not consent to send code away)."""
    choice = settings.embedder
    if choice == "hash":
        return HashEmbedder()
    if choice == "openai":
        from codeqa_lsp.index.embedders.remote import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    from codeqa_lsp.index.embedders import local

    if local.is_available():
        return local.LocalEmbedder()
    if choice == "local":
        raise EmbedderError(
            "the local embedder is not installed: pip install 'codeqa-lsp[local]' (or choose 'hash')"
        )
    log.info("sentence-transformers not installed; using the hash embedder")
    return HashEmbedder()
