"""Embedders: `local` (MiniLM on onnxruntime, offline), `openai` (on request only), `hash`
(always there)."""

from __future__ import annotations

import logging

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.base import CountingEmbedder, Embedder, EmbedderError, l2_normalize
from codeqa_lsp.index.embedders.hashing import HashEmbedder

log = logging.getLogger(__name__)

__all__ = [
    "CountingEmbedder",
    "Embedder",
    "EmbedderError",
    "HashEmbedder",
    "create_embedder",
    "l2_normalize",
]


def create_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for. `auto` is `local` when usable, else `hash`;
    never `openai` (a key in the environment is not consent to send code away).

    The one place that falls back: when the local embedder's packages are installed but its
    weights are missing or damaged, both `auto` and `local` warn in one line and use `hash`
    (search keeps working, lexically; the local vectors already on disk stay for when the
    weights are repaired). Only `local` asked for explicitly without its packages installed
    is an error, because then the fix is an install the user must make."""
    choice = settings.embedder
    if choice == "hash":
        return HashEmbedder()
    if choice == "openai":
        from codeqa_lsp.index.embedders.remote import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    from codeqa_lsp.index.embedders import local

    reason = local.unusable_reason()
    if reason is None:
        return local.LocalEmbedder()
    if not local.is_installed():
        if choice == "local":
            raise EmbedderError(f"{reason} (or choose 'hash')")
        log.info("%s; using the hash embedder", reason)
        return HashEmbedder()
    log.warning("%s; using the hash embedder", reason)
    return HashEmbedder()
