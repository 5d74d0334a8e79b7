rankfile --fabric fat2:leaves=4,down=4,up=2,spines=2 --hosts node[002-003,005,007-008,010-016] --format json --cores-per-node 2 --route-aware --running running-rings-reverse.txt
