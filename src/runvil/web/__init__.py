"""The web tools: ``web/fetch`` and ``web/search``, and the network seam they share."""

from runvil.web.fetch.network import DnsError, Network

__all__ = ["DnsError", "Network"]
