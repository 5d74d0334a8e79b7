fabric show bom.csv
