"""Experiments: the experiment model, how a host is shared, IOH export, GPU scaling and its projection."""
