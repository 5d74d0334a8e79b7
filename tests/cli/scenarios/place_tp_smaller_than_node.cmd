place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 2 --tp 2 --json
