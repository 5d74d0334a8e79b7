place --fabric fat2:leaves=3,down=12,up=12,nvl=18,gpus=4 -N 18 --tp 4 --ep 72 --busy node001 --explain
