place --fabric tiers.csv --nodes 4 --explain
