"""A third-party env package for sekai."""
