simulate -q --fabric rail:sus=2,hosts=4,rails=2 --routes ospf --trace traces/itp-cluster04-head300.csv --out /proc/fabricplace-out
