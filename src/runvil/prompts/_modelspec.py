"""``PROVIDER:MODEL``: how a model role names its endpoint, parsed in one place.

The configuration checks a role's spec when it is read (so the error can name the file and the
key) and the model clients turn it into an endpoint when a prompt needs it; both go through
:func:`parse_model_spec`, so they can never disagree about what a spec means. This module imports
nothing, so reading a configuration never loads the model clients.
"""

from __future__ import annotations

__all__ = ["parse_model_spec"]


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``(provider, model)`` of ``"openai:gpt-4o-mini"``, each part stripped of surrounding
    whitespace. The provider is everything before the first ``:`` (a model name may hold more,
    as ``ollama:llama3.1:8b`` does). ``ValueError`` when either part is empty or there is no
    ``:``."""
    provider, sep, model = spec.partition(":")
    provider, model = provider.strip(), model.strip()
    if not sep or not provider or not model:
        raise ValueError(f"model {spec!r} must be written PROVIDER:MODEL, as openai:gpt-4o-mini")
    return provider, model
