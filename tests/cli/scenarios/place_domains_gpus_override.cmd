place --fabric fat2:leaves=3,down=4,up=4,nvl=6,gpus=4 -N 2 --tp 16 --gpus-per-node 8
