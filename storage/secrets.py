"""Keeping API keys out of everything prefval writes: the database, logs, exports and error messages.

Keys come from the environment only. Any environment variable whose name looks like a credential
(``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``) is treated as secret, and its value is replaced
by ``***`` wherever it would appear; config keys named like credentials are dropped.
"""
from __future__ import annotations

import functools
import os
import re
from typing import Any

_SECRET_ENV_NAME = re.compile(r"(API_?KEY|_KEY|_TOKEN|_SECRET|PASSWORD|^KEY$|^TOKEN$)", re.IGNORECASE)
_SECRET_FIELD_NAME = re.compile(r"(api[_-]?key|secret|password|passwd|authori[sz]ation|access[_-]?token|"
                                r"bearer|^token$|_token$|^key$)", re.IGNORECASE)
#: Values that look like provider keys even when they did not come from the environment (sk-..., bearer tokens).
_KEY_SHAPE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9_\-\.=]{8,})")
MIN_SECRET_LENGTH = 6


def secret_values() -> list[str]:
    """Values of the environment variables named like credentials (at least MIN_SECRET_LENGTH characters),
    longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_ENV_NAME.search(k) and len(v) >= MIN_SECRET_LENGTH}
    return sorted(values, key=len, reverse=True)


def scrub_text(text: str, secrets: list[str] | None = None) -> str:
    """text with every secret value from the environment and every key-shaped token replaced by ``***``.
    secrets: secret_values() read by the caller just before (one read for many texts written together)."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, "***")
    if "sk-" not in text and "Bearer" not in text:  # what _KEY_SHAPE can match starts with one of these
        return text
    return _KEY_SHAPE.sub("***", text)


@functools.lru_cache(maxsize=4096)
def is_secret_field(name: str) -> bool:
    """True for a config/parameter name that holds a credential (api_key, secret, password, token ...);
    max_tokens and the like are not."""
    lowered = name.lower()
    if "tokens" in lowered:
        return False
    return bool(_SECRET_FIELD_NAME.search(lowered))


def scrub_config(value: Any) -> Any:
    """A copy of a JSON-like value with credential-named keys removed and secret values scrubbed from strings."""
    if isinstance(value, dict):
        return {k: scrub_config(v) for k, v in value.items() if not is_secret_field(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub_config(v) for v in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value
