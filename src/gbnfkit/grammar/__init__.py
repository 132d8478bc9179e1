"""Grammar syntax: GBNF text <-> grammar IR."""
