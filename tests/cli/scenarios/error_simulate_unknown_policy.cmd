simulate --fabric fat2:leaves=2,down=4,up=1 --trace traces/itp-cluster04-head300.csv --policies fabric,best --out /proc/fabricplace-out
