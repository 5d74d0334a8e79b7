simulate -q --fabric fat2:leaves=2,down=4,up=1 --trace traces/itp-cluster04-head300.csv --estimate-factor inf --out /proc/fabricplace-out
