"""How the Train tab's feature-extraction probe is fitted (backend/train/probe.py fits with these; the tab's
snippet writes the same fit out): a multinomial logistic regression by full-batch L-BFGS on standardised
features, with scikit-learn's default L2 strength."""

from __future__ import annotations

C = 1.0  # inverse L2 strength on the summed loss, as scikit-learn's LogisticRegression(C=1.0)
MIN_SCALE = 1e-6  # a feature whose standard deviation is under this is centred, not scaled
LBFGS = dict(lr=1.0, max_iter=200, tolerance_grad=1e-6, tolerance_change=1e-9, history_size=20,
             line_search_fn="strong_wolfe")  # torch.optim.LBFGS's arguments
