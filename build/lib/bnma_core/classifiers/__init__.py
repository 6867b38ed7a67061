"""scikit-learn estimators for Bayesian network classifiers (DESIGN §6)."""
