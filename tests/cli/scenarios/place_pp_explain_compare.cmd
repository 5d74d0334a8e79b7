place --fabric fat2:leaves=4,down=4,up=1 --nodes 8 --pp 2 --free node[001-002,005-010] --explain --compare
