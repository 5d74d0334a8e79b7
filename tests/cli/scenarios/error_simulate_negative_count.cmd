simulate -q --fabric fat2:leaves=2,down=4,up=1 --trace traces/itp-cluster04-head300.csv --skip-jobs -1 --out /proc/fabricplace-out
