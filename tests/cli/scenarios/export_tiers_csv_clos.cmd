fabric export clos.csv --format tiers-csv
