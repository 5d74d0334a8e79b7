fabric show rail:sus=2,hosts=18,rails=4,up=18,radix=40,nvl=18,gpus=4
