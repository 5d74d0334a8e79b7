place --fabric fabrics/fat2_L8.ibnetdiscover.txt -N 12 --state states/fat2_L8.sinfo.txt --policy first-fit
