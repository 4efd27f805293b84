"""Is the fit to be trusted: diagnostics, predictive checks, PSIS-LOO and SBC.

Convergence diagnostics and verdicts, posterior predictive checks, PSIS-LOO and simulation-based
calibration (SBC).
"""
