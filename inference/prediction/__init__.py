"""Class probabilities of new rows from any estimate, their streaming writers, and decisions.

Probabilities are computed in tiles of bounded memory; decisions are made under a loss matrix.
"""
