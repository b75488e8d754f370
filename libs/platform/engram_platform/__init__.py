"""Shared plumbing for Engram services: settings, broker, Mongo, tracing, delivery guarantees."""
