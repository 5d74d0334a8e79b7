fabric show no-such-file.txt
