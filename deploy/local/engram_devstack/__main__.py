"""`python -m engram_devstack`: the dev stack's command line."""

from engram_devstack.cli import main

raise SystemExit(main())
