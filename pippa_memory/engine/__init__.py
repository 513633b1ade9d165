"""The memory engine as this side sees it: the client, the contract's schemas, budgets, members."""
