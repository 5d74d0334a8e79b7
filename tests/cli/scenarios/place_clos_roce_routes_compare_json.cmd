place --fabric clos-roce.csv --nodes 20 --routes adaptive --compare --json
