place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 8 --tp 16 --free node[001-005,021-025,041-042] --json
