"""Connectors: turn a drop folder and a Google Drive changes feed into document events."""
