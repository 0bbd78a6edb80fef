"""The fluent, Noir-style pipeline API."""
