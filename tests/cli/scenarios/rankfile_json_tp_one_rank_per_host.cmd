# One rank per host (torchrun style) on 2-GPU hosts, TP 4 GPUs: groups of 2 hosts, 2 ranks.
rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[001-002,005,009] --gpus-per-node 2 --tp 4 --format json --cores-per-node 2
