place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 21 --tp 168
