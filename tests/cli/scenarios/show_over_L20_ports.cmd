fabric show fabrics/over_L20.ibnetdiscover-p.txt
