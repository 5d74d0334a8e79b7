simulate -q --fabric fat2:leaves=2,down=4,up=1 --lfts routes/fat2_L8-ftree.lfts.dump.gz --trace traces/itp-cluster04-head300.csv --out /proc/fabricplace-out
