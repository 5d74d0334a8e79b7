# --tp counts GPUs: 16 GPUs on 8-GPU hosts, 4 ranks each, is a TP group of 2 hosts (8 ranks).
rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[016,001-002,009-010,005] --tasks-per-node 4 --tp 16 --cores-per-node 8 --format openmpi
