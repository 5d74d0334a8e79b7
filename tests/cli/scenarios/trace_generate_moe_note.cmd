trace generate llm:jobs=6,seed=3,load=0.8,hosts=288,moe=1,ep=16 --gpus-per-node 4
