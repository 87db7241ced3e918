"""All-pairs chunk overlap (S&GM98): the FPrint-DocID relation, the sort-based join and coarse
counting, and Pereira's iterative algorithm over sub-collections. Import the submodules."""
