"""JSON Schemas of the source kinds: kinds (apiVersion/kind), legacy rows, validation."""
