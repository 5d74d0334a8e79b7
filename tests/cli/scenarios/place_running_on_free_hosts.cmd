place --fabric fat2:leaves=4,down=4,up=1 --nodes 6 --free node[001-004,006-011,013-015] --running running-uplinks.txt
