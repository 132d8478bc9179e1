"""``python -m gbnfkit.cli``."""

from __future__ import annotations

import sys

from gbnfkit.cli import main

sys.exit(main())
