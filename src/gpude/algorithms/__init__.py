"""Algorithms: what is computed (parameters and operators), independent of how it runs."""
