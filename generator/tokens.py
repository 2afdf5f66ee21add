"""Offline token counting with litellm's ``token_counter`` (its bundled tokenizer; nothing is downloaded).
litellm is imported here lazily, with its local cost map and offline mode set first."""
from __future__ import annotations

import os


def litellm_module():
    """litellm, imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true`` set before."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    return litellm


def count_tokens(model: str, messages: list[dict]) -> int:
    """Prompt tokens of ``messages`` for ``model`` (litellm's tokenizer for the model, else its default)."""
    return int(litellm_module().token_counter(model=model, messages=messages))
