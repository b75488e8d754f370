"""The memory service's use cases, one module per concern; IO only through `engram_memory.ports`."""
