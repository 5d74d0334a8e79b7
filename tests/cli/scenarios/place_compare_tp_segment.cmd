place --fabric fabrics/fat3_small.ibnetdiscover.txt -N 8 --tp 16 --slurm-version 24.11 --free node[001-003,021-023,081-084,101-102] --compare
