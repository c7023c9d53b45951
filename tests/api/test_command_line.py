"""What the commands share: what a command stopped by an error must have changed before
it is run again."""

from __future__ import annotations

from redstring import EmbeddingRefusedError, EmbeddingUnavailableError, StoreUnavailableError
from redstring.api.command_line import settings_to_fix


def test_only_a_refusal_names_settings_to_fix_before_running_again() -> None:
    named = EmbeddingRefusedError("refused with HTTP 401", status_code=401, options=["api_key_env"])
    unnamed = EmbeddingRefusedError("refused", status_code=403)  # a provider of one's own
    assert settings_to_fix(named) == "the settings the error says to check"
    assert settings_to_fix(unnamed) == "the embedding provider's settings"
    for cured_by_waiting in (
        StoreUnavailableError("Neo4j is unavailable"),
        EmbeddingUnavailableError("the model server went away", attempts=3),
        None,
    ):
        assert settings_to_fix(cured_by_waiting) is None
