"""A fetch's outcome as one typed value; the text a model reads is rendered from it, once.

The fetch pipeline (:mod:`.tool`, :mod:`.pagetext`, :mod:`.reading`) produces a
:class:`FetchOutcome`: a page (its text, final URL, whether it was cut, how it was extracted,
where to read on, what rendered it) or a failure (its kind and exact message). Every reader
takes the fields it needs: the tool's result text for a model (:meth:`FetchOutcome.model_text`,
the provenance header and the page, or the soft failure's text), the typed
:class:`~runvil.web._fetch.result.FetchResult` for a Python program, the command line's
``--json``, exit code and hints. Nothing parses the header back.

A hard failure is still raised as :class:`~runvil._errors.ToolError` (the call fails);
:meth:`FetchOutcome.from_error` reads one into an outcome where a face wants one value.

A plain (not frozen) slotted dataclass: one is made per fetch, and a frozen one costs a
``object.__setattr__`` per field to build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from runvil._errors import ToolError

__all__ = ["SOFT", "AddressRefused", "CertificateRefused", "FetchOutcome"]

#: ``error_kind`` of a soft failure (the call's result text; the CLI's exit code 1).
SOFT = "Soft"


class AddressRefused(ToolError):
    """``host {host} has no allowed address``, with what the fetch knew when it refused: the
    host's answers and the table row each fell in (``refused``), and whether the host was
    reached by a redirect from another host (``redirected``). A person's hints read them; the
    message is the specified one, and the error reads as a ``ToolError``."""

    def __init__(self, error: ToolError, host: str, refused: tuple[tuple[str, str], ...]) -> None:
        super().__init__(error.kind, error.message, untrusted=error.untrusted)
        self.host = host
        self.refused = refused
        self.redirected = False

    def __repr__(self) -> str:
        return f"ToolError({self.kind.value}, {self.message!r})"


class CertificateRefused(NamedTuple):
    """A server certificate the fetch refused: the host and port of the hop, the verifier's
    reason and its OpenSSL verify code (None when it gave none). A person's hint reads it (an
    unknown CA's codes name ``ca_bundle``); the model's text is the plain network error."""

    host: str
    port: int | None
    reason: str
    verify_code: int | None


@dataclass(slots=True)
class FetchOutcome:
    """One fetch. On success ``error_kind`` is None and ``text``, ``url``, ``truncated``,
    ``extraction``, ``next_start_index`` (continuation only, when text remains) and
    ``rendered_by`` (None for runvil's own rendering) describe the page. On failure
    ``error_kind`` is ``"Soft"`` or a hard failure's kind, and ``message`` the exact text; for
    a host with no allowed address, ``host``, ``refused`` and ``redirected`` say why, and for a
    network failure ``cause`` names the egress client's error (``CertificateFailed``, ...),
    with ``certificate`` saying why for a refused server certificate."""

    text: str = ""
    url: str | None = None
    truncated: bool = False
    extraction: str | None = None
    next_start_index: int | None = None
    rendered_by: str | None = None
    error_kind: str | None = None
    message: str | None = None
    host: str | None = None
    refused: tuple[tuple[str, str], ...] = ()
    redirected: bool = False
    cause: str | None = None
    certificate: CertificateRefused | None = None

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @classmethod
    def soft(
        cls,
        message: str,
        cause: str | None = None,
        certificate: CertificateRefused | None = None,
    ) -> FetchOutcome:
        """A soft failure: ``message`` is the call's whole result text."""
        return cls(error_kind=SOFT, message=message, cause=cause, certificate=certificate)

    @classmethod
    def from_error(cls, error: ToolError) -> FetchOutcome:
        """A hard failure, with the refused addresses when the error carries them."""
        if isinstance(error, AddressRefused):
            return cls(
                error_kind=error.kind.value,
                message=error.message,
                host=error.host,
                refused=error.refused,
                redirected=error.redirected,
            )
        return cls(error_kind=error.kind.value, message=error.message)

    def header(self) -> str:
        """The provenance header of a page, ending with its blank line (docs/fetch.md)."""
        following = (
            f"next_start_index: {self.next_start_index}\n"
            if self.next_start_index is not None
            else ""
        )
        rendered = f"rendered: {self.rendered_by}\n" if self.rendered_by is not None else ""
        return (
            f"url: {self.url}\n"
            f"truncated: {'true' if self.truncated else 'false'}\n"
            f"{following}"
            f"extraction: {self.extraction}\n"
            f"{rendered}"
            f"\n"
        )

    def model_text(self) -> str:
        """The tool's result text: the header and the page, or a failure's exact message."""
        if self.error_kind is not None:
            return self.message or ""
        if self.next_start_index is None and self.rendered_by is None:
            # The common case in one piece: no second copy of the page's text.
            return (
                f"url: {self.url}\n"
                f"truncated: {'true' if self.truncated else 'false'}\n"
                f"extraction: {self.extraction}\n"
                f"\n"
                f"{self.text}"
            )
        return self.header() + self.text
