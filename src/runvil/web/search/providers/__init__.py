"""Search providers: each one speaks one vendor's API through the endpoint-locked egress client."""
