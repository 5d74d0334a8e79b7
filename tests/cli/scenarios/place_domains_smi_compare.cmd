place --fabric fat2:leaves=2,down=8,up=8 --domains domains/nvl_8hosts.smi.txt -N 2 --tp 8 --busy node[001-003] --compare
