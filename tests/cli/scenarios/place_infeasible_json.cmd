place --fabric fabrics/fat3_small.ibnetdiscover.txt -N 2 --tp 16 --free node[021,121,161] --json
