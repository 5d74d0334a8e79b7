place --fabric fat2:leaves=2,down=4,up=2,spines=2 --nodes 2 --routes ecmp,adaptive
