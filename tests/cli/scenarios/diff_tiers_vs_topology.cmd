fabric diff tiers.csv tiers.topology.conf
