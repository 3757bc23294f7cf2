"""``web/search``: argument checking and rendering around a pluggable search provider."""
