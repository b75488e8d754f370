"""A stand-in service that dies at once, so the supervisor must restart it with backoff."""

import sys

print("crashy: failing on purpose", flush=True)
sys.exit(3)
