fabric merge fabrics/rail_4su_planes/plane0.ibnetdiscover.txt fabrics/rail_4su_planes/plane1.ibnetdiscover.txt -o -
