rankfile --fabric fat2:leaves=2,down=4,up=2 --hosts node[001-002] --format hostfile --route-aware --routes ftree,ecmp
