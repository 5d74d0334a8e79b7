fabric export --format ibnetdiscover flat.conf
