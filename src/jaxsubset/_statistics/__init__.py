"""The statistics registry, its roads and the one dispatcher (see ``_registry``)."""
