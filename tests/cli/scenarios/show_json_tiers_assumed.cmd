fabric show --json tiers.csv
