rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[009-010,001-002] --tasks-per-node 8 --tp 16 --hwloc-xml hwloc/dgx2-with-hcas.xml --format torchrun
