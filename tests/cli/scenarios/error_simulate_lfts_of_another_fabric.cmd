simulate -q --fabric routes/v2_fat2_guid-ftree.ibnetdiscover.txt.gz --routes lfts:routes/fat2_L8-ftree.lfts.dump.gz --trace traces/itp-cluster04-head300.csv --out /tmp/fabricplace-never-written
