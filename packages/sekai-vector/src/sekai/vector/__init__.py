"""Vector environments: every backend, make_vec and the vector wrappers."""
