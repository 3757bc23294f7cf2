"""Every soft and hard outcome of a fetch, with its exact text.

The messages are contract (seed 001, "Every fetch failure message"), so each template lives here
once and nowhere else. A *soft* failure is the call's result text: the model reads it and tries
another URL. A *hard* failure fails the call with a :class:`~runvil._errors.ToolError`.

Two URL forms appear in messages, and which one a message uses is part of the contract:

- ``display`` (``scheme://host[:port]/path``) in every message built from a named failure
  (status, content type, charset, size cap, body read, time limit, refused redirect), so a
  secret in a query string never reaches the model through an error;
- the href as requested (query kept, fragment already dropped) in the catch-all network error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runvil._errors import ToolError, ToolErrorKind

if TYPE_CHECKING:
    from runvil.web._fetch.outcome import CertificateRefused

TASK_DID_NOT_FINISH = "web_fetch: the fetch task did not finish"


class SoftFailure(Exception):
    """A fetch that ended without a page; ``text`` is the whole result text for the caller.
    ``cause``: for a network failure, the egress client's error (``CertificateFailed``,
    ``ConnectFailed``, ...), and ``certificate`` why a server certificate was refused, which a
    person's hints may read and a model never does."""

    def __init__(
        self, text: str, cause: str | None = None, certificate: CertificateRefused | None = None
    ) -> None:
        super().__init__(text)
        self.text = text
        self.cause = cause
        self.certificate = certificate

    def __str__(self) -> str:
        return self.text


class DnsFailed(SoftFailure):
    """The lookup of ``host`` failed (a robots.txt check tells this apart from the rest)."""

    def __init__(self, host: str) -> None:
        super().__init__(f"dns resolution failed for {host}")
        self.host = host


class StatusFailure(SoftFailure):
    """The final response had a non-2xx ``status`` (a robots.txt check reads the status)."""

    def __init__(self, display: str, status: int) -> None:
        super().__init__(f"{display} answered HTTP {status}; try a different URL")
        self.status = status


class HopRefused(SoftFailure):
    """A redirect hop was refused (the text is the whole ``redirect from ...`` message)."""


def dns_failed(host: str) -> SoftFailure:
    return DnsFailed(host)


def timed_out(display: str) -> SoftFailure:
    return SoftFailure(f"request to {display} timed out; try again or use a different URL")


def body_unreadable(display: str) -> SoftFailure:
    return SoftFailure(
        f"the response body from {display} could not be read; try again or use a different URL"
    )


def network_error(
    href: str, cause: str | None = None, certificate: CertificateRefused | None = None
) -> SoftFailure:
    return SoftFailure(
        f"fetch failed for {href}: network error; try a different URL", cause, certificate
    )


def proxy_refused(href: str) -> SoftFailure:
    """The operator's egress proxy refused the tunnel (its own policy, or its credentials): the
    URL is named, the proxy never is."""
    return SoftFailure(
        f"fetch failed for {href}: the network's proxy refused the connection; "
        "try a different URL"
    )


def http_status(display: str, status: int) -> SoftFailure:
    return StatusFailure(display, status)


def content_type_refused(content_type: str, display: str) -> SoftFailure:
    return SoftFailure(
        f"content type {content_type} from {display} cannot be returned as text; "
        "try an HTML version of the page or a different URL"
    )


def no_content_type(display: str) -> SoftFailure:
    return SoftFailure(
        f"response from {display} declared no content type; refusing to guess its format; "
        "try a different URL"
    )


def size_cap(display: str, limit: int) -> SoftFailure:
    return SoftFailure(f"response from {display} exceeds the {limit}-byte size cap")


def unknown_charset(display: str, label: str) -> SoftFailure:
    return SoftFailure(
        f"response from {display} declared unknown charset {label.lower()}; cannot decode its text"
    )


def no_allowed_address(host: str) -> ToolError:
    """Untrusted: on a redirect hop, ``host`` is whatever name the page chose."""
    return ToolError(
        ToolErrorKind.InvalidArguments, f"host {host} has no allowed address", untrusted=True
    )


def task_did_not_finish() -> ToolError:
    return ToolError(ToolErrorKind.Other, TASK_DID_NOT_FINISH)


# -- reading more: robots.txt and PDFs (runvil's extensions; docs/fetch.md, "Reading more") ----


def robots_disallowed(display: str) -> SoftFailure:
    return SoftFailure(f"{display} is disallowed by the site's robots.txt")


def pdf_encrypted(display: str) -> SoftFailure:
    return SoftFailure(
        f"the PDF from {display} is encrypted; its text cannot be read without a password; "
        "try a different URL"
    )


def pdf_damaged(display: str) -> SoftFailure:
    return SoftFailure(
        f"the PDF from {display} is damaged or incomplete; its text cannot be read; "
        "try a different URL"
    )


def pdf_no_text(display: str) -> SoftFailure:
    return SoftFailure(
        f"the PDF from {display} has no text to extract (its pages may be scanned images); "
        "try a different URL"
    )


def pdf_over_limits(display: str) -> SoftFailure:
    return SoftFailure(
        f"the PDF from {display} could not be converted within the time and memory limits; "
        "try a different URL"
    )
