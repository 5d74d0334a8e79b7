fabric show bad/links-contradict.csv
