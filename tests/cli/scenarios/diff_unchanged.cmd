fabric diff fabrics/fat2_L8.ibnetdiscover.txt fat2:leaves=8,down=20,up=20
