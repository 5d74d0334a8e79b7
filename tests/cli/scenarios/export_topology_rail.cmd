fabric export fabrics/rail_4su.ibnetdiscover-p.txt --format slurm-topology
