fabric generate fat2:leaves=2,down=2,up=2
