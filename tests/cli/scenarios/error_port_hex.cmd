fabric watch --state /nonexistent-fp-state fat2:leaves=2,down=4,up=2 --port 0x1
