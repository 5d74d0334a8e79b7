fabric diff fat2:leaves=2,down=2,up=2 fat2:leaves=2,down=2,up=2,cut=leaf01:3,degrade=leaf02:4:w=1
