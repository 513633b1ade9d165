"""The cache ledger: a row per vessel call, the prices, the bill, its report, chart, page and API."""
