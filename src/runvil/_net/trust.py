"""Which certificate authorities runvil's TLS connections trust: the public roots, and an
operator's own CA bundle on top of them.

Most company networks sign their intranet servers with a CA of their own. ``ca_bundle`` (a PEM
file of one or more CA certificates) adds those CAs to the trust a :class:`~runvil._net.Network`
already has: the public roots stay trusted, and nothing is ever trusted *instead* of them. The
file is read once, when the setting is given, so a missing or unreadable file is a
configuration error at start and never a network error in the middle of a run.

The path stays available as a plain string (``Network.ca_bundle``, ``FetchPolicy.ca_bundle``)
so anything else that opens connections for runvil can trust the same file.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

__all__ = ["CaBundleError", "ca_bundle_path", "check_ca_bundle", "trust_ca_bundle"]


class CaBundleError(ValueError):
    """The CA bundle cannot be used; the message names the file and why."""


def ca_bundle_path(value: object) -> str:
    """``value`` (a string or path) as the bundle's path, ``~`` expanded; ``CaBundleError`` for
    anything else."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise CaBundleError(f"ca_bundle must be the path of a PEM file, not {value!r}")
    return str(Path(value.strip()).expanduser())


def trust_ca_bundle(context: ssl.SSLContext, path: str) -> None:
    """Add the CA certificates of the PEM file at ``path`` to ``context``'s trust (what it
    trusted already stays trusted). Raises :class:`CaBundleError` naming the file."""
    try:
        context.load_verify_locations(cafile=path)
    except FileNotFoundError:
        raise CaBundleError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise CaBundleError(f"cannot read {path}: it is a directory, not a PEM file") from None
    except ssl.SSLError:  # an OSError too: caught first
        raise CaBundleError(f"{path} holds no PEM certificate") from None
    except OSError as err:
        raise CaBundleError(f"cannot read {path}: {err.strerror or err}") from None


def check_ca_bundle(value: object) -> str:
    """The bundle's path once the file has been read and holds at least one CA certificate
    (loaded into a throwaway context); raises :class:`CaBundleError` otherwise."""
    path = ca_bundle_path(value)
    trust_ca_bundle(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), path)
    return path
