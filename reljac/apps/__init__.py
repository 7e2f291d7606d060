"""Command-line applications built on the public API (no math here)."""
