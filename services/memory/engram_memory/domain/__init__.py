"""Pure memory rules: content checks, retention, the recall floor, tombstone cascades."""
