"""Below everything: errors, files, random numbers, the JIT targets, the GPU runtime and lease, provenance."""
