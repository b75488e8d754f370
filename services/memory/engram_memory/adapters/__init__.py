"""The memory service's stores: Mongo rows and the vector collection."""
