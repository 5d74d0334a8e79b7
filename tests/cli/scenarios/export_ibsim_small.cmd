fabric export fat2:leaves=2,down=2,up=2 --format ibsim-net
