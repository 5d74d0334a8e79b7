rankfile --fabric rail:sus=2,hosts=4,rails=2,nvl=4,gpus=2 --hosts node[002-007] --tasks-per-node 2 --tp 2 --ep 4 --format json --cores-per-node 2
