simulate -q --fabric fat2:leaves=1,down=1,up=1 --trace llm:jobs=20,seed=1,load=0.5,hosts=64,w1=0,w128=0 --out /proc/fabricplace-out
