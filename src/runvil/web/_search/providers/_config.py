"""Checking an operator-supplied base URL once, when the provider is built."""

from __future__ import annotations

from collections.abc import Iterable

from yarl import URL

from runvil._net.hostnames import PrivateHosts, has_empty_label, host_key


def endpoint_url(
    url: str,
    *,
    what: str,
    allow_http: bool,
    private_hosts: PrivateHosts | Iterable[str] = (),
) -> tuple[URL, str]:
    """Parse ``url`` and return it with its ``host:port`` endpoint declaration.

    ``https`` is required; plain ``http`` only for an endpoint the operator declared private
    (``allow_http``: a LAN instance, or a host and port named in ``private_hosts``), because a
    search request carries the query and sometimes a key. URL credentials and fragments are
    refused: a secret belongs in its own setting, never in a URL that ends up in logs.
    """
    try:
        parsed = URL(url.strip())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not a valid URL") from exc
    if not allow_http and parsed.scheme == "http" and parsed.raw_host and parsed.port:
        listed = (
            private_hosts
            if isinstance(private_hosts, PrivateHosts)
            else PrivateHosts.parse(private_hosts)
        )
        allow_http = listed.match(parsed.raw_host.lower(), parsed.port)
    allowed = ("https", "http") if allow_http else ("https",)
    if parsed.scheme not in allowed:
        hint = "" if allow_http else " (plain http only for a private endpoint)"
        raise ValueError(f"{what} must be an https URL{hint}")
    if not parsed.raw_host or parsed.port is None:
        raise ValueError(f"{what} has no host")
    if parsed.raw_user is not None or parsed.raw_password is not None:
        raise ValueError(f"{what} must not contain credentials")
    if parsed.raw_fragment:
        raise ValueError(f"{what} must not contain a fragment")
    if has_empty_label(parsed.raw_host):
        raise ValueError(f"{what} has a host name with an empty label")
    host = host_key(parsed.raw_host)
    name = f"[{host}]" if ":" in host else host
    return parsed, f"{name}:{parsed.port}"
