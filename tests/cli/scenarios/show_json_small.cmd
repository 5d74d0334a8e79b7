fabric show --json fat2:leaves=2,down=2,up=2,degrade=leaf02:3:w=1
