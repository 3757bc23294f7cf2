"""``runvil run FILE.md``: a prompt file run with the configured Host and model roles.

Why a module apart from the CLI: this is where configuration meets the prompt host (model roles
become endpoints, the approval mode becomes an approver), and the CLI should only parse flags and
print. The prompt runtime itself lives in :mod:`runvil.prompts`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from runvil.config import Config, ConfigError
from runvil.host import Approval, ApprovalRequest, Approver, Host
from runvil.terminal import terminal_safe

__all__ = ["model_endpoints", "run_prompt_file", "terminal_approver"]


def model_endpoints(
    config: Config, roles: Iterable[str], env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The endpoints of the configured roles among ``roles`` (the ones the prompt names).

    Roles the prompt does not name are not resolved, so a stale ``RUNVIL_MODEL_*`` variable or a
    role for another prompt whose key is unset never stops this run.
    """
    from runvil.prompts.models import endpoint_from_spec

    endpoints: dict[str, Any] = {}
    for role in roles:
        if role not in config.models:
            continue
        try:
            endpoints[role] = endpoint_from_spec(config.models[role], cast(Any, config), env)
        except ValueError as err:
            raise ConfigError(f"model role {role}: {err}") from None
    return endpoints


def terminal_approver() -> Approver:
    """Approval mode ``ask``: a question on the terminal before a web tool's call.

    ``y`` allows this call, ``a`` allows this and every later call of the tool in this run, and
    anything else refuses it (the model reads the refusal). Without a terminal to ask on, every
    call is refused: silence is not consent.
    """

    def ask(request: ApprovalRequest) -> Approval:
        if not sys.stdin.isatty():
            return Approval.REFUSE
        sys.stderr.write(
            f"runvil: allow {request.tool_id} {terminal_safe(request.detail)}? "
            "[y]es / [a]lways / [N]o "
        )
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        if answer in ("a", "always"):
            return Approval.ALWAYS
        if answer in ("y", "yes"):
            return Approval.ONCE
        return Approval.REFUSE

    async def approve(request: ApprovalRequest) -> Approval:
        return await asyncio.to_thread(ask, request)

    return approve


def _print_line(line: str) -> None:
    """What a prompt prints goes to stderr, so stdout holds only the run result."""
    print(terminal_safe(line) if sys.stderr.isatty() else line, file=sys.stderr, flush=True)


def _approver(config: Config) -> Approver | None:
    if config.approval == "ask":
        return terminal_approver()
    if config.approval == "deny":
        return lambda request: Approval.REFUSE
    return None


async def run_prompt_file(path: Path, config: Config) -> str:
    """Load and run the prompt at ``path``; raises ``RunError`` as the prompt host does."""
    from runvil.assemble import network_and_policy, search_provider
    from runvil.prompts import load_prompt, run_prompt

    prompt = load_prompt(path)
    network, policy = network_and_policy()
    provider = search_provider(config.search, network) if config.web else None
    plugins = ("runvil/web", "promptforge/web") if config.web else ()
    models = model_endpoints(config, prompt.models)
    async with Host(
        plugins=plugins, search_provider=provider, network=network,
        approve=_approver(config), fetch_policy=policy,
    ) as host:
        result: str = await run_prompt(prompt, host=host, models=models, on_print=_print_line)
    return result

