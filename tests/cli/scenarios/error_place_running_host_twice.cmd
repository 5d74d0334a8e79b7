place --fabric fat2:leaves=2,down=4,up=4 --nodes 2 --running bad/running-host-twice.txt
