"""characterise (study 100): a platform's congestion in GPCNeT's numbers.

Beyond the five papers: canaries on a fifth of the nodes (random-ring latency,
random-ring bandwidth with sync, small allreduce) measured alone and beside
congestors on the rest (all-to-all, incast, put incast, get broadcast), and
the Congestion Impact Factor of each canary (congested over isolated) as its
average and its 99th percentile, over rounds.

- :mod:`.plan`: what the workflow runs (the program's arguments, targets);
- :mod:`.cif`: the Congestion Impact Factors and the congestors' offered load;
- :mod:`.figures`: the CIF figure; :mod:`.config`: checks of the config section.
"""
