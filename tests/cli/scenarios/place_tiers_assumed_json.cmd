place --fabric tiers.csv --nodes 4 --json
