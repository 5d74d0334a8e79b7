place --fabric fat2:leaves=4,down=4,up=1 --nodes 2 --running running-uplinks.txt
