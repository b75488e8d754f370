"""Memory: agents' memories, their vectors, recall with a floor, retention and tombstones."""
