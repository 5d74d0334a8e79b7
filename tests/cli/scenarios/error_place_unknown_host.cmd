place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 4 --free node[150-170]
