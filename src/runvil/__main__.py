"""``python -m runvil``: the same command line as the ``runvil`` script."""

from runvil.cli import main

main()
