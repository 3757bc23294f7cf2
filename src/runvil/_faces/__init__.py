"""The faces: the ``runvil`` command line, the MCP server, ``runvil run`` and the one function
that turns configuration (``runvil.toml``, the environment, flags) into a Host and tools.

Private by name: the console script is ``runvil._faces.cli:main`` and ``python -m runvil`` runs
the same; nothing outside this package imports from it (docs/architecture.md).
"""
