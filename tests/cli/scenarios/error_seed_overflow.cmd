simulate -q --fabric fat2:leaves=2,down=4,up=1 --trace traces/itp-cluster04-head300.csv --degrade-links 1 --seed 18446744073709551616 --out /proc/fabricplace-out
