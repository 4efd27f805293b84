"""Is the fit to be trusted: convergence diagnostics and verdicts, posterior predictive checks, PSIS-LOO and
simulation-based calibration (SBC).
"""
