place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 3 --tp 16
