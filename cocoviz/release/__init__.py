"""Release: post-processing into the published object, its checks, its files, the ledger and the budget report."""
