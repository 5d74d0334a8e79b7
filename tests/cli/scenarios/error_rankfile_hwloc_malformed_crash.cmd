rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[001,009] --tasks-per-node 2 --hwloc-xml hwloc/malformed-crash.xml --format openmpi
