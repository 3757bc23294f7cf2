"""``web/fetch``: one guarded GET, rendered as text for a model."""
