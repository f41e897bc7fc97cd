"""Family 2xx: gang scheduling and queues (EML201-EML204), one module per rule."""
