"""Privacy: accounting (pure ε and ρ-zCDP), the budget of a plan, a privately chosen K, and the noise samplers."""
