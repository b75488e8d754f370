"""`python -m engram_mcp`: serve Engram's tools over stdio (default) or streamable HTTP."""

from engram_mcp.main import main

if __name__ == "__main__":
    main()
