fabric show fat2:leaves=2,down=4,up=4 --domains domains/bad_two_domains.smi.txt
