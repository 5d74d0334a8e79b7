simulate -q --fabric rail:sus=2,hosts=4,rails=2 --trace traces/itp-cluster04-head300.csv --out /proc/fabricplace-out
