"""A vocoder and the code that serves it: weight norm that nothing on the serving path folds (WN110)."""
