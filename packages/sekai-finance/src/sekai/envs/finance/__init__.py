"""Market environments and their native vector versions."""
