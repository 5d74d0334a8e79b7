rankfile --fabric fabrics/over_L20-degraded.ibnetdiscover.txt --hosts node[021-023,001-002] --format torchrun
