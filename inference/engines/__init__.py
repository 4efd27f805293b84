"""How the posterior is reached: :func:`fit` and the sampling methods it dispatches to.

The methods: NUTS backends, the latent GP's Gibbs sampler, exact conjugate draws, point estimates.
"""
