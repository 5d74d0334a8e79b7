fabric diff fabrics/fat3_small.ibnetdiscover.txt clos-roce.topology.conf
