"""Test helpers shared by the integration and e2e tiers."""
