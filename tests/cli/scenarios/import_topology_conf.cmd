fabric show --link-speed 2xNDR topology.conf
