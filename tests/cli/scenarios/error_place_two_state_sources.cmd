place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 4 --free node001 --busy node002
