place --fabric fabrics/over_L20-degraded.ibnetdiscover.txt -N 2 --free node001,node036,node065 --compare --explain
