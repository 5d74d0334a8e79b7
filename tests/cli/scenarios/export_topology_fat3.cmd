fabric export fabrics/fat3_small.ibnetdiscover.txt --format slurm-topology
