fabric show bad/unknown-record.txt
