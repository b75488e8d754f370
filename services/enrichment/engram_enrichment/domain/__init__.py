"""Pure knowledge logic: facts, support, contradictions and articles, with no IO."""
