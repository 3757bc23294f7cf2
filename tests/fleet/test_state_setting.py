"""``[mcp] state``: a redis:// URL or a clear refusal that never quotes it; ``runvil config``
shows it with its password masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from runvil._faces.config import ConfigError, describe, load_config


@pytest.mark.parametrize("value", [
    "http://cache:6379/0", "redis://cache/0", "redis://:s3cret@cache:6379/x", "redis://:6379/0",
    "redis://cache:6379/0?db=1",
])
def test_a_state_that_is_not_a_redis_url_is_refused(tmp_path: Path, value: str) -> None:
    env = {"HOME": str(tmp_path), "RUNVIL_MCP_STATE": value}
    with pytest.raises(ConfigError) as info:
        load_config(env=env, cwd=tmp_path)
    assert str(info.value) == (
        "RUNVIL_MCP_STATE must be a URL of the form redis://HOST:PORT/DB"
    )
    assert "s3cret" not in str(info.value)


def test_the_state_is_shown_without_its_password(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "RUNVIL_MCP_STATE": "redis://:s3cret@cache:6379/2"}
    config = load_config(env=env, cwd=tmp_path)
    assert config.mcp_state == "redis://:s3cret@cache:6379/2"
    assert describe(config)["mcp"] == {"state": "redis://:********@cache:6379/2"}
    assert "s3cret" not in repr(config)
