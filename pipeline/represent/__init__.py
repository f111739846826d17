"""Document representations: the lexical default and the optional neural encoders."""
