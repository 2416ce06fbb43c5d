"""``python -m ldr.cli``: the command line, as the ``ldr`` script."""

from ldr.cli.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
