"""Tables and figures of the reproduced studies, from trial tables (matplotlib, no GPU)."""
