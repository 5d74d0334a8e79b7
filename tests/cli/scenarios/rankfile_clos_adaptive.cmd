rankfile --fabric clos-roce.csv --hosts gpu[001-008,017-024,105-112] --format hostfile --route-aware --routes adaptive --running running-rings-clos.txt
