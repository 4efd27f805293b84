"""Class probabilities of new rows from any estimate (in tiles of bounded memory), their streaming writers, and
decisions under a loss matrix.
"""
