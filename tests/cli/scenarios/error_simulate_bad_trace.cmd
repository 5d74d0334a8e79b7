simulate -q --fabric fat2:leaves=2,down=4,up=1 --trace bad/trace_bad_duration.csv --out /proc/fabricplace-out
