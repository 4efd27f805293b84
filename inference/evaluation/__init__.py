"""How good are the estimates: scores of class probabilities and held-out evaluation of every estimate.

Every estimate is evaluated by one path.
"""
