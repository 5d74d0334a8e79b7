place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 4 --tp 0
