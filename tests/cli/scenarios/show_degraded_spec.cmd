fabric show fat3:pods=2,leaves=2,down=4,up=4,spines=2,degrade=p01-leaf01:5:w=1,degrade=p02-spine02:6:s=EDR,cut=p02-leaf02:6
