"""storage/secrets.py: which field names and environment values count as secrets, and how text and configs are
scrubbed of them, worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from storage.secrets import is_secret_field, scrub_config, scrub_text, secret_values


def test_secret_values_from_the_minimum_length_longest_first(monkeypatch):
    import os

    from storage.secrets import _SECRET_ENV_NAME, MIN_SECRET_LENGTH, secret_values

    for k in [k for k in os.environ if _SECRET_ENV_NAME.search(k)]:  # this machine's own: out of the way
        monkeypatch.delenv(k)
    assert MIN_SECRET_LENGTH == 6
    monkeypatch.setenv("A_TOKEN", "zzzzzz")  # exactly 6: kept
    monkeypatch.setenv("B_API_KEY", "aaaaaaaaaa")  # 10
    monkeypatch.setenv("C_SECRET", "short")  # 5: too short to look for
    assert secret_values() == ["aaaaaaaaaa", "zzzzzz"]  # longest first (by text, "zzzzzz" would come first)


def test_secret_fields():
    for name in ("api_key", "API-KEY", "apikey", "client_secret", "password", "passwd", "Authorization",
                 "authorisation", "access_token", "access-token", "bearer", "token", "refresh_token", "key"):
        assert is_secret_field(name), name
    for name in ("max_tokens", "max_completion_tokens", "model", "keyword", "monkey", "tokenizer", "temperature"):
        assert not is_secret_field(name), name


def test_scrubbing(monkeypatch):
    for k in list(__import__("os").environ):
        if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("OPENAI_API_KEY", "abcdef123")
    monkeypatch.setenv("MY_TOKEN", "tok456789xyz")
    monkeypatch.setenv("SHORT_KEY", "abcde")         # shorter than 6: not a secret value
    monkeypatch.setenv("PATH_LIKE", "abcdef123456")  # not named like a credential
    assert secret_values() == ["tok456789xyz", "abcdef123"]  # longest first
    assert scrub_text("use abcdef123 and tok456789xyz, not abcde") == "use *** and ***, not abcde"
    assert scrub_text("sk-ABCDEFGH12 and Bearer abcdefgh.ij= and sk-short") == "*** and *** and sk-short"
    cfg = {"model": "m", "api_key": "x", "nested": [{"password": "p", "note": "key abcdef123"}], "n": 3,
           "t": ("sk-12345678abc",)}
    assert scrub_config(cfg) == {"model": "m", "nested": [{"note": "key ***"}], "n": 3, "t": ["***"]}


def test_scrubbing_with_the_values_the_caller_read(monkeypatch):
    for k in list(__import__("os").environ):
        if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            monkeypatch.delenv(k)
    # values read once for a batch of texts (Store.put_llm_calls): they are scrubbed though no longer in the env
    assert scrub_text("keys abcdef123 and tok456789xyz", ["tok456789xyz", "abcdef123"]) == "keys *** and ***"
    assert scrub_text("nothing secret here", ["abcdef123"]) == "nothing secret here"


def test_a_bearer_token_without_sk_is_scrubbed():
    assert scrub_text("Authorization: Bearer abcdefgh12345678 sent", []) == "Authorization: *** sent"
