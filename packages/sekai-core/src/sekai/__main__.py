"""``python -m sekai``: the same as the ``sekai`` command."""

from sekai.cli import main

if __name__ == "__main__":  # importing this module (pydoc, doc tools) must not run the command
    raise SystemExit(main())
