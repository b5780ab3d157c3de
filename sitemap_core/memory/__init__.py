"""What the core remembers between requests: page caches and the facts and answers
kept under a source's fingerprint, one module per idea."""
