fabric generate fat2:leaves=8,colour=blue
