"""How good are the estimates: scores of class probabilities and held-out evaluation of every estimate by one
path.
"""
