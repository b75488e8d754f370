"""Benchmarks: `make bench` runs every script here and collects their figures."""
