"""Bridges to gymnasium, PettingZoo and Stable-Baselines3."""
