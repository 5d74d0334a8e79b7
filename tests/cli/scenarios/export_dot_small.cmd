fabric export fat2:leaves=2,down=2,up=4,spines=2,degrade=leaf02:4:s=EDR --format dot
