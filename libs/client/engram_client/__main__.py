"""`python -m engram_client ...` runs the `engram` CLI (for environments without the script)."""

import sys

from engram_client.cli.main import main

sys.exit(main())
