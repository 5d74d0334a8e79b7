rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[001-002] --tasks-per-node 0 --format slurm
