fabric diff no-such.json fat2:leaves=2
