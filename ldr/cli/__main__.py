"""``python -m ldr.cli``: the command line, as the ``ldr`` script."""

from ldr.cli.commands import main

raise SystemExit(main())
