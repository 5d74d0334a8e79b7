place --fabric fat2:leaves=2,down=4,up=4 --nodes 2 --busy node[001-002] --running running-squeue.txt
