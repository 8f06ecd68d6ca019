"""``python -m sekai``: the same as the ``sekai`` command."""

from sekai.cli import main

raise SystemExit(main())
