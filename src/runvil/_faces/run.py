"""``runvil run FILE.md``: a prompt file run with the configured Host and model roles.

Why a module apart from the CLI: this is where a wired configuration meets the prompt host (the
prompt's model roles become endpoints, the Host gets the web Pack and every installed Pack), and
this is how ``runvil run`` asks a person about a call. The CLI only parses flags and prints; the
prompt runtime itself lives in :mod:`runvil.prompts`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from runvil._faces.terminal import terminal_safe
from runvil._faces.wiring import Wiring
from runvil._host import Approval, ApprovalRequest, Approver

__all__ = ["run_prompt_file", "terminal_approver"]


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


async def run_prompt_file(path: Path, wiring: Wiring) -> str:
    """Load and run the prompt at ``path``; raises ``RunError`` as the prompt host does."""
    from runvil.prompts import load_prompt, run_prompt

    prompt = load_prompt(path)
    models = wiring.model_endpoints(prompt.models)
    async with wiring.host(installed=True, prompts=True) as host:
        result: str = await run_prompt(prompt, host=host, models=models, on_print=_print_line)
    return result
