fabric export fat3:pods=2,leaves=2,down=4,up=4 --format hostmap
