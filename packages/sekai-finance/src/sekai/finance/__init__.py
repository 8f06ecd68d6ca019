"""Market building blocks shared by the finance envs: samplers, costs, data."""
