"""runvil: safe, exact web fetch and search tools for language models.

The public API is re-exported here; the modules behind it are private details.
"""

from runvil.errors import RunError, RunErrorKind, ToolError, ToolErrorKind
from runvil.host import Host

__all__ = ["Host", "RunError", "RunErrorKind", "ToolError", "ToolErrorKind"]
__version__ = "0.1.0"
