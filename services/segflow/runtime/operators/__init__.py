"""Runtime implementations of the API's operators, grouped by kind."""
