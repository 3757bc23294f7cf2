"""Adapters that hand runvil's tools to agent frameworks (optional extras)."""
