"""The ``runvil`` command line: the web tools for a person at a terminal or a shell pipeline."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click

from runvil.errors import ToolError


@click.group()
def cli() -> None:
    """Safe, exact web access for language models."""


@cli.command()
@click.argument("url")
@click.option("--max-chars", type=int, default=None, help="Characters of text to return.")
@click.option("--raw", is_flag=True, default=False, help="Render the whole HTML page.")
def fetch(url: str, max_chars: int | None, raw: bool) -> None:
    """Fetch URL and print its main content as text."""
    from runvil.web import WebFetch

    args: dict[str, Any] = {"url": url}
    if max_chars is not None:
        args["max_chars"] = max_chars
    if raw:
        args["raw"] = True

    async def run() -> str:
        async with WebFetch() as tool:
            return await tool.call(args)

    try:
        text = asyncio.run(run())
    except ToolError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    click.echo(text)


def main() -> None:
    """Console entry point."""
    cli()
