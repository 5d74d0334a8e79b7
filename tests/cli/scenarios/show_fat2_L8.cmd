fabric show fabrics/fat2_L8.ibnetdiscover.txt
