fabric import bad/truncated.ibnetdiscover.txt
