"""Page state: the view in the address and the resources cached per cache folder."""
