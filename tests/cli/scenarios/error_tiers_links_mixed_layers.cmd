fabric show bad/clos-mixed-layers.csv
