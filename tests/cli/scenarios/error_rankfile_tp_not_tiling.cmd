# 16 GPUs on 8-GPU hosts spans 2 hosts: 3 hosts do not tile.
rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[001-003] --tasks-per-node 4 --tp 16 --format json
