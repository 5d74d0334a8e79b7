fabric import fabrics/fat2_L8.ibnetdiscover.txt fabrics/over_L20.ibnetdiscover.txt
