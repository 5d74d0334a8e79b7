fabric diff clos-roce.csv clos-roce.topology.conf
