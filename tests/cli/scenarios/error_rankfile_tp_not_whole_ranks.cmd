# 3 ranks per 8-GPU host cannot make a TP group of 4 GPUs.
rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[001-002] --tasks-per-node 3 --tp 4 --format slurm
