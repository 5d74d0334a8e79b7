fabric export fabrics/no_leaf_two_hosts.json --format slurm-block
