"""Model files: format detection and every reader and writer behind :func:`ubpe.load`."""
