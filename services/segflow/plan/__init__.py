"""From the fluent API's job graph to a deterministic execution plan (pure logic, no I/O)."""
