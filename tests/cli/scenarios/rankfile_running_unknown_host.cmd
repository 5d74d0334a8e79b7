rankfile --fabric fat2:leaves=2,down=4,up=2,spines=2 --hosts node[003-004,007-008] --format hostfile --route-aware --running bad/running-unknown-host.txt
