place --fabric fat2:leaves=2,down=6,up=6,nvl=6,gpus=4 -N 3 --tp 12 --busy node001
