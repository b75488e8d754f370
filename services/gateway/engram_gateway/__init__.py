"""The HTTP gateway workflow apps call: tenancy, API keys, agents, and the public API."""
