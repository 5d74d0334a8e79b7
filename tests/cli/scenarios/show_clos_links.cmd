fabric show clos.csv
