"""The emulated cluster: namespaces, bridges, shaped links, validation and counters."""
