"""How the posterior is reached: :func:`fit` and the sampling methods it dispatches to (NUTS backends, the latent
GP's Gibbs sampler, exact conjugate draws, point estimates).
"""
