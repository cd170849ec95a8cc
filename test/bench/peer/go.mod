module railfit.example/bench/peer

go 1.19
