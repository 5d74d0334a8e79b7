place --fabric fabrics/over_L20-degraded.ibnetdiscover.txt -N 40 --explain
