place --fabric fabrics/rail_4su.ibnetdiscover.txt -N 24 --tp 16 --free node[001-012,021-036,041-052,061-070] --explain
