"""The one guarded egress: every byte runvil sends or receives over the network passes here.

``web/fetch``, the ``web/search`` providers and the model clients (``prompts/_models.py``) all
reach the network through this package, each with its own admission rule as a parameter
(:mod:`.rules`); the way a connection is made, checked, pooled and read is the same for all.

Modules, one job each:

* :mod:`.addresses` - the blocked address table (and the rows a named private host may use).
* :mod:`.hostnames` - the operator's named private hosts (``private_hosts``).
* :mod:`.network` - the :class:`Network` seam (resolve, route, TLS trust) and :class:`DnsError`.
* :mod:`.trust` - an operator's CA bundle, trusted besides the public roots.
* :mod:`.permit` - the dial permit a request carries, and the context that carries it.
* :mod:`.rules` - the admission rules (public web, endpoint-locked, operator endpoints) and
  :func:`approve`, which turns a lookup into a permit.
* :mod:`.client` - the one egress client every caller sends through (a rule, a request and a
  read plan in; a bounded response or a typed error out), over the guarded transport.
* :mod:`.errors` - the typed network errors the client raises.
* :mod:`.mock` - a response-level transport for tests of the providers and model clients.
* :mod:`.connector` - the guarded aiohttp session (pinned dial, socket check, pool check) and
  :func:`send`; the only module that touches aiohttp's private API.
* :mod:`.decoding` - bounded streaming decoders for content codings.
* :mod:`.body` - reading a body under a cap on its decoded size.
* :mod:`.secrets` - keeping the credentials a request carried out of how its answer is quoted.

Private by name: only ``runvil.web`` (its tools and providers) and ``runvil.prompts._models``
import it. Everyone else uses the public re-exports (``runvil.web.Network``,
``runvil.web.DnsError``). It imports nothing from the rest of runvil.

This ``__init__`` re-exports only the light modules (no aiohttp, no codecs), so naming a
:class:`Network` costs no HTTP stack; the session, the decoders and the body reader are imported
from their own modules by the code that sends requests (the client, in practice).
"""

from runvil._net.addresses import BLOCKED_RANGES, allowed_addresses, blocked_range
from runvil._net.network import DnsError, Network, identity_route, system_resolve
from runvil._net.permit import DialPermit, DialRefused, permitted
from runvil._net.rules import (
    NAMED_PRIVATE,
    PUBLIC_WEB,
    EndpointLocked,
    NoAllowedAddress,
    approve,
    operator_endpoints,
)

__all__ = [
    "BLOCKED_RANGES",
    "NAMED_PRIVATE",
    "PUBLIC_WEB",
    "DialPermit",
    "DialRefused",
    "DnsError",
    "EndpointLocked",
    "Network",
    "NoAllowedAddress",
    "allowed_addresses",
    "approve",
    "blocked_range",
    "identity_route",
    "operator_endpoints",
    "permitted",
    "system_resolve",
]
