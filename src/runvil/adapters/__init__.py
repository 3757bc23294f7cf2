"""Adapters that hand runvil's web tools to agent frameworks.

Each adapter wraps one Host run (one envelope nonce per conversation) and offers the tools with
their exact schemas and descriptions:

* :class:`runvil.adapters.openai.OpenAITools`: Chat Completions / Responses API tool specs and a
  dispatcher (no SDK needed);
* :class:`runvil.adapters.anthropic.AnthropicTools`: Messages API tool specs and a dispatcher (no
  SDK needed);
* :class:`runvil.adapters.pydantic_ai.PydanticAIWebTools`: a pydantic-ai toolset (extra
  ``runvil[pydantic-ai]``);
* :class:`runvil.adapters.langchain.LangChainWebTools`: LangChain tools (extra
  ``runvil[langchain]``).

They are imported from their modules so that one framework's absence never breaks another.
"""
