fabric export rail:sus=2,hosts=4,rails=4 --format slurm-features
