"""Script front ends: the parser core shared by the vector DSL and TVMScript dialects."""
