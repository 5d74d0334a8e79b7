place --fabric fat2:leaves=2,down=4,up=2 -N 2 --routes ecmp --ecmp-seed -1
