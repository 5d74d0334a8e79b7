fabric show --link-speed 4xNDR tiers.csv
