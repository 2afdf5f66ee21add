"""Offline token counting of message lists (contexts) with litellm's ``token_counter`` and its bundled tokenizer;
litellm is imported through the client's ``import_litellm`` (offline, local price map)."""
from __future__ import annotations


def count_tokens(model: str, messages: list[dict]) -> int:
    """Tokens of ``messages`` for ``model`` (litellm's tokenizer for the model, else its default)."""
    from generator.client import import_litellm

    return int(import_litellm().token_counter(model=model, messages=messages))
