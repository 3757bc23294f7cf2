"""Prompt files: parsing, the sandboxed Lua runtime, model clients and the run itself.

```python
from runvil.prompts import load_prompt, run_prompt, ModelEndpoint
models = {"writer": ModelEndpoint(api="openai", base_url="https://api.openai.com/v1",
                                  model="gpt-4o-mini", api_key="...")}
result = await run_prompt(load_prompt("fetch-page.md"), host=host, models=models)
```

The reference is ``docs/prompts.md``.
"""

from runvil.prompts.document import Prompt, Section, load_prompt, parse_prompt
from runvil.prompts.limits import Limits
from runvil.prompts.models import ModelEndpoint, endpoint_from_spec, endpoints_from_config
from runvil.prompts.run import run_prompt

__all__ = [
    "Limits",
    "ModelEndpoint",
    "Prompt",
    "Section",
    "endpoint_from_spec",
    "endpoints_from_config",
    "load_prompt",
    "parse_prompt",
    "run_prompt",
]
