"""``python -m runvil``: the same command line as the ``runvil`` script."""

from runvil._faces.cli import main

main()
