"""Prompt files: parsing, the sandboxed Lua runtime, model clients and the run itself.

```python
from runvil.prompts import load_prompt, run_prompt, ModelEndpoint
models = {"writer": ModelEndpoint(api="openai", base_url="https://api.openai.com/v1",
                                  model="gpt-4o-mini", api_key="...")}
result = await run_prompt(load_prompt("fetch-page.md"), host=host, models=models)
```

The reference is ``docs/prompts.md``. Names are loaded on first use, so importing this package
(or reading a configuration that names model roles) loads neither Lua nor the HTTP stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runvil._lazy import lazy_exports

if TYPE_CHECKING:
    from runvil.prompts._document import Prompt as Prompt
    from runvil.prompts._document import Section as Section
    from runvil.prompts._document import load_prompt as load_prompt
    from runvil.prompts._document import parse_prompt as parse_prompt
    from runvil.prompts._limits import Limits as Limits
    from runvil.prompts._models import ModelEndpoint as ModelEndpoint
    from runvil.prompts._models import endpoint_from_spec as endpoint_from_spec
    from runvil.prompts._models import endpoints_from_config as endpoints_from_config
    from runvil.prompts._modelspec import parse_model_spec as parse_model_spec
    from runvil.prompts._run import run_prompt as run_prompt

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ("Prompt", "Section", "load_prompt", "parse_prompt"), "runvil.prompts._document"
    ),
    "Limits": "runvil.prompts._limits",
    "parse_model_spec": "runvil.prompts._modelspec",
    **dict.fromkeys(
        ("ModelEndpoint", "endpoint_from_spec", "endpoints_from_config"), "runvil.prompts._models"
    ),
    "run_prompt": "runvil.prompts._run",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
