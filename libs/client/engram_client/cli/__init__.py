"""`engram`: the operator CLI over the gateway's public API (and the gateway's tenant command)."""
