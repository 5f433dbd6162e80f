"""The old name of the hub's command line: `python -m backend.models list|pull` keeps working.

Code imports `backend.hub`; this module only forwards the CLI (earlier READMEs and scripts use it).
"""

import sys

from backend.hub.cli import main

if __name__ == "__main__":
    sys.exit(main())
