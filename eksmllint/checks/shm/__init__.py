"""Family 3xx: shared memory (/dev/shm), one module per rule."""
