fabric show --link-speed 5xHDR tiers.csv
