"""Prompt files: parsing, the sandboxed Lua runtime, model clients and the run itself."""
