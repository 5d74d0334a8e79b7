place --fabric fabrics/fat3_small.ibnetdiscover.txt -N 6 --free node[001,021-022,081-084,101-103] --compare --json
