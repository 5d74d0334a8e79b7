fabric show fat4:leaves=2
