"""`python -m backend.hub list|pull`."""

import sys

from backend.hub.cli import main

sys.exit(main())
