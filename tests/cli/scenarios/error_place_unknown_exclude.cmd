place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 4 --exclude node[001-004,200]
