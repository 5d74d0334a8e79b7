# The command line rankfile_openmpi_tp_pairs used when --tp counted ranks: --tp 8 is now 8 GPUs,
# one 8-GPU host per TP group (4 ranks), so the plain ring order stands and nothing is split.
rankfile --fabric fat3:pods=2,leaves=2,down=4,up=4 --hosts node[016,001-002,009-010,005] --tasks-per-node 4 --tp 8 --cores-per-node 8 --format openmpi
