place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 30 --free node[001-020] --compare --json
