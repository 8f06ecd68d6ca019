"""An example third-party vector backend for sekai: ThreadVecEnv, mode ``"demo-threads"``."""
