"""What a model is shown for ``web/search``: its id, its one-sentence description and the
eight-field argument schema (only ``query`` required).

The description is fixed by the spec and names no argument; everything a model needs to know
about an argument lives in that argument's own ``description`` here.
"""

from __future__ import annotations

from typing import Any

TOOL_ID = "web/search"
DESCRIPTION = "Search the web and return a list of results (title, url, description)."


def _hostnames(description: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 128},
        "maxItems": 20,
        "description": description,
    }


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 400,
            "description": "The search text, 1 to 400 characters.",
        },
        "count": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "Maximum number of results to return, from 1 to 20. "
            "Leave it out to get the search provider's default number.",
        },
        "freshness": {
            "type": "string",
            "enum": ["pd", "pw", "pm", "py"],
            "description": "Only return results from the past day (pd), past week (pw), "
            "past month (pm) or past year (py).",
        },
        "country": {
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "description": "Two-letter country code to target results to, "
            "such as \"us\" or \"de\".",
        },
        "search_lang": {
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "description": "Language code of the results to prefer, such as \"en\" or \"fr\".",
        },
        "safesearch": {
            "type": "string",
            "enum": ["off", "moderate", "strict"],
            "description": "SafeSearch filtering level for adult content: off, moderate or strict.",
        },
        "include_domains": _hostnames(
            "Only return results from these sites: up to 20 bare hostnames such as "
            "\"example.com\" (no scheme or path); subdomains of a listed hostname match too."
        ),
        "exclude_domains": _hostnames(
            "Drop results from these sites: up to 20 bare hostnames such as \"example.com\" "
            "(no scheme or path); subdomains of a listed hostname are dropped too."
        ),
    },
    "required": ["query"],
    "additionalProperties": False,
}
